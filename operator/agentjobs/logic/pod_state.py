"""What a phase pod's status says about its agent container, and why a run failed (R15, R36).

Kubernetes reports a pod's trouble in several places (the pod's phase and
reason, its PodScheduled condition, the agent container's waiting and
terminated states); this module reads them all and turns them into the
contract's run facts and system-failure kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum, auto
from typing import Any

from agentjobs.logic import agent_timeout, naming
from agentjobs.models.contract import FailureKind, SystemFailure

_IMAGE_PULL_REASONS = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
_CONFIG_REASONS = {"CreateContainerConfigError", "CreateContainerError", "RunContainerError"}
_AUTH_WORDS = ("unauthorized", "authentication", "denied", "forbidden", "401", "403")


class Stage(Enum):
    """Where the agent container is in its life."""

    WAITING = auto()
    RUNNING = auto()
    TERMINATED = auto()


@dataclass(frozen=True)
class AgentState:
    """The agent container's state as the pod's status shows it."""

    stage: Stage
    reason: str | None = None
    message: str | None = None
    exit_code: int | None = None
    finished_at: str | None = None
    started_at: str | None = None


def _agent_status(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    for status in pod.get("status", {}).get("containerStatuses") or []:
        if status.get("name") == container:
            found: dict[str, Any] = status
            return found
    return None


def agent_state(pod: dict[str, Any], container: str) -> AgentState:
    status = _agent_status(pod, container)
    state = (status or {}).get("state") or {}
    if "terminated" in state:
        terminated = state["terminated"]
        return AgentState(
            Stage.TERMINATED,
            terminated.get("reason"),
            terminated.get("message"),
            terminated.get("exitCode"),
            terminated.get("finishedAt"),
            terminated.get("startedAt"),
        )
    if "running" in state:
        return AgentState(Stage.RUNNING)
    waiting = state.get("waiting") or {}
    pod_status = pod.get("status", {})
    if pod_status.get("phase") in ("Failed", "Succeeded"):
        # The pod ended before the agent ran (a deadline, an eviction, a failed init container).
        return AgentState(Stage.TERMINATED, pod_status.get("reason"), pod_status.get("message"))
    return AgentState(Stage.WAITING, waiting.get("reason"), waiting.get("message"))


def has_ended(pod: dict[str, Any], sidecar: str) -> bool:
    """``sidecar`` is done: it terminated, or the pod ended without it ever running.

    The pod's phase alone does not tell: it may turn ``Succeeded`` as soon as the
    regular containers end, while a sidecar is still at its last work.
    """
    status = pod.get("status", {})
    for container in status.get("initContainerStatuses") or []:
        if container.get("name") == sidecar:
            state = container.get("state") or {}
            if "terminated" in state:
                return True
            return "waiting" in state and status.get("phase") in ("Succeeded", "Failed")
    return True  # no such sidecar: nothing to wait for


def _image_pull_kind(message: str) -> FailureKind:
    lowered = message.lower()
    return FailureKind.AUTH if any(word in lowered for word in _AUTH_WORDS) else FailureKind.CONFIG


def unschedulable_message(pod: dict[str, Any]) -> str | None:
    """The scheduler's explanation when it cannot place the pod."""
    for condition in pod.get("status", {}).get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == "Unschedulable"
        ):
            return str(condition.get("message") or "the pod cannot be scheduled")
    return None


def _stuck_container(pod: dict[str, Any], state: AgentState) -> AgentState:
    """The agent's wait, or the first init container's that blocks it (an image, a Secret)."""
    if state.reason in _IMAGE_PULL_REASONS or state.reason in _CONFIG_REASONS:
        return state
    for status in pod.get("status", {}).get("initContainerStatuses") or []:
        waiting = (status.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _IMAGE_PULL_REASONS | _CONFIG_REASONS:
            message = f"{status.get('name')}: {waiting.get('message') or waiting['reason']}"
            return AgentState(Stage.WAITING, waiting["reason"], message)
    return state


def waiting_failure(pod: dict[str, Any], agent: AgentState) -> SystemFailure:
    """Why a pod that never started its agent is stuck, as a blocker (R36)."""
    state = _stuck_container(pod, agent)
    message = state.message or ""
    if state.reason in _IMAGE_PULL_REASONS:
        return SystemFailure(
            kind=_image_pull_kind(message),
            code=state.reason or "ErrImagePull",
            message=f"the agent image cannot be pulled: {message or state.reason}",
        )
    if state.reason in _CONFIG_REASONS:
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=state.reason or "CreateContainerConfigError",
            message=f"the agent container cannot be configured: {message or state.reason}",
        )
    unschedulable = unschedulable_message(pod)
    if unschedulable is not None:
        return SystemFailure(
            kind=FailureKind.QUOTA,
            code="Unschedulable",
            message=f"the pod cannot be scheduled: {unschedulable}",
        )
    reason = state.reason or pod.get("status", {}).get("phase") or "Pending"
    return SystemFailure(
        kind=FailureKind.TRANSIENT,
        code="PodPendingTimeout",
        message=f"the pod did not start its agent in time ({reason}{': ' if message else ''}"
        f"{message})",
    )


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


def _recorded_time(value: object) -> datetime | None:
    """A time written on the pod, where anyone who may patch pods could write anything."""
    try:
        return _time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def pending_failure(
    pod: dict[str, Any], state: AgentState, *, now: datetime, timeout: float
) -> SystemFailure | None:
    """Why a waiting pod ends its phase blocked, or None while it may still start.

    Only a wait that time cannot end counts (an image that cannot be pulled, a
    missing Secret, no room to schedule), measured from the pod's creation so that
    an operator restart does not restart the clock. ContainerCreating during a
    long pull, PodInitializing while inputs download, or an autoscaler adding a
    node are left to run.
    """
    created = _time(pod.get("metadata", {}).get("creationTimestamp"))
    if not is_blocking_wait(pod, state) or created is None:
        return None
    if now - created < timedelta(seconds=timeout):
        return None
    return waiting_failure(pod, state)


def pending_deadline(pod: dict[str, Any], *, timeout: float) -> datetime | None:
    """When a blocking wait that started with the pod would end its phase."""
    created = _time(pod.get("metadata", {}).get("creationTimestamp"))
    return None if created is None else created + timedelta(seconds=timeout)


def _deleted_after(pod: dict[str, Any], agent: AgentState | None) -> bool:
    """The deletion came after the agent had ended on its own (a second of slack, since
    pod times are kept to the second). When was it asked for: the operator's record on the
    pod, or a graceful ``deletionTimestamp`` less its grace; once the kubelet's last delete
    has set the grace to 0 and nothing recorded it, nobody can tell, and the deletion is
    taken as the interruption it most likely was."""
    meta = pod.get("metadata", {})
    finished = _time(agent and agent.finished_at)
    recorded = (meta.get("annotations") or {}).get(naming.ANNOTATION_DELETION_REQUESTED)
    requested = _recorded_time(recorded)
    grace = int(meta.get("deletionGracePeriodSeconds") or 0)
    removal = _time(meta.get("deletionTimestamp"))
    if requested is None and removal is not None and grace > 0:
        requested = removal - timedelta(seconds=grace)
    if requested is None or finished is None:
        return False
    return requested > finished + timedelta(seconds=1)


def interruption(
    pod: dict[str, Any], *, deleted_by_operator: bool, agent: AgentState | None = None
) -> SystemFailure | None:
    """R22a: the pod is being taken away from its agent, from the pod's own signals.

    A deletion the operator did not ask for, unless it came after the agent had
    ended (its agent then exits 143, 137, or 0 on a clean SIGTERM, none of which
    is the agent's verdict); a ``DisruptionTarget`` condition (eviction,
    preemption, a taint on a lost node), the kubelet's eviction and the node
    controller's ``NodeLost``. The kubelet writes an eviction's reason and
    condition only with the pod's final status, after the agent's exit, so
    those interrupt whatever the exit code.
    """
    meta, status = pod.get("metadata", {}), pod.get("status", {})
    for condition in status.get("conditions") or []:
        if condition.get("type") == "DisruptionTarget" and condition.get("status") == "True":
            reason = condition.get("reason") or "DisruptionTarget"
            detail = condition.get("message") or "the pod is being disrupted"
            return SystemFailure(
                kind=FailureKind.TRANSIENT, code=reason, message=f"the pod was disrupted: {detail}"
            )
    if status.get("reason") in ("Evicted", "NodeLost"):
        return SystemFailure(
            kind=FailureKind.TRANSIENT,
            code=str(status["reason"]),
            message=status.get("message") or f"the pod was lost ({status['reason']})",
        )
    if meta.get("deletionTimestamp") and not deleted_by_operator and not _deleted_after(pod, agent):
        return SystemFailure(
            kind=FailureKind.TRANSIENT,
            code="PodDeleted",
            message="the phase's pod was deleted from outside the operator before its agent "
            "finished",
        )
    return None


def node_lost(pod: dict[str, Any]) -> bool:
    """The pod's node stopped answering: the taint manager evicts it, or the node controller
    marks it lost. Nothing will stop its containers or write its final status."""
    status = pod.get("status", {})
    if status.get("reason") == "NodeLost":
        return True
    return any(
        c.get("type") == "DisruptionTarget"
        and c.get("status") == "True"
        and c.get("reason") == "DeletionByTaintManager"
        for c in status.get("conditions") or []
    )


def removal_deadline(pod: dict[str, Any]) -> datetime | None:
    """When a pod being deleted should be gone: its grace period has run out."""
    return _time(pod.get("metadata", {}).get("deletionTimestamp"))


def is_blocking_wait(pod: dict[str, Any], state: AgentState) -> bool:
    """A wait that only a change of settings (or capacity) can end, not time."""
    stuck = _stuck_container(pod, state)
    return (
        stuck.reason in _IMAGE_PULL_REASONS
        or stuck.reason in _CONFIG_REASONS
        or unschedulable_message(pod) is not None
    )


def termination_failure(pod: dict[str, Any], state: AgentState) -> SystemFailure | None:
    """R15: why a terminated agent did not end cleanly, or None for a clean exit 0."""
    pod_status = pod.get("status", {})
    pod_reason = pod_status.get("reason")
    if pod_reason == "DeadlineExceeded":
        return SystemFailure(
            kind=FailureKind.TIMEOUT,
            code="DeadlineExceeded",
            message=pod_status.get("message") or "the phase ran past its timeoutSeconds",
        )
    timed_out = agent_timeout.timed_out(pod, state.started_at, state.finished_at)
    if timed_out is not None:
        return timed_out
    if state.reason == "OOMKilled":
        return SystemFailure(
            kind=FailureKind.OUT_OF_MEMORY,
            code="OOMKilled",
            message="the agent container was killed for exceeding its memory limit",
        )
    if state.reason in ("StartError", "ContainerCannotRun"):
        return SystemFailure(
            kind=FailureKind.CONFIG,
            code=state.reason,
            message=f"the agent container could not start: {state.message or state.reason}",
        )
    if state.exit_code is None:
        return SystemFailure(
            kind=FailureKind.CRASH,
            code=pod_reason or "NoExitCode",
            message=pod_status.get("message") or "the agent container ended without an exit code",
        )
    return None
