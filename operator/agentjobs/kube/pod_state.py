"""What a phase pod's status says about its agent container, and why a run failed (R15, R36).

Kubernetes reports a pod's end in several places (the pod's phase and reason,
its conditions, the agent container's terminated state); this module reads
them all and turns them into the contract's run facts and system-failure
kinds. Why a pod has not started is :mod:`agentjobs.contract.resolution.pod_start`'s (R61).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum, auto
from typing import Any

from agentjobs.kube import agent_timeout, naming
from agentjobs.models.contract import FailureKind, SystemFailure


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


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


def recorded_time(value: object) -> datetime | None:
    """A time written on the pod, where anyone who may patch pods could write anything."""
    try:
        return _time(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _deleted_after(pod: dict[str, Any], agent: AgentState | None) -> bool:
    """The deletion came after the agent had ended on its own (a second of slack, since
    pod times are kept to the second). When was it asked for: the operator's record on the
    pod, or a graceful ``deletionTimestamp`` less its grace; once the kubelet's last delete
    has set the grace to 0 and nothing recorded it, nobody can tell, and the deletion is
    taken as the interruption it most likely was."""
    meta = pod.get("metadata", {})
    finished = _time(agent and agent.finished_at)
    recorded = (meta.get("annotations") or {}).get(naming.ANNOTATION_DELETION_REQUESTED)
    requested = recorded_time(recorded)
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
