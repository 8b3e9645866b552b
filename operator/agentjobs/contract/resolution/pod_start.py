"""R61: a phase pod whose main container (the agent, or a grader) has not started, and
whether its phase waits on or ends now.

Kubernetes shows why a pod cannot start in its containers' statuses: a container waiting
with a reason, a sidecar (an init container with ``restartPolicy: Always``) restarted in a
loop, a regular init container that exited non-zero, or the scheduler's ``PodScheduled``
condition. Each such trouble ends the phase ``failed`` (``platform``) with the container's
own words, either now, when only a new pod could end it, or once the pending timeout has
passed since the pod was created, when something outside the pod still may:

- ``ErrImagePull``, ``ImagePullBackOff``: at the timeout (a registry blip, a late push),
  with the last pull error seen, not only the back-off's "Back-off pulling image";
  auth when the registry refused, else config.
- ``ErrImageNeverPull``: at the timeout (the image may still be loaded onto the node).
- ``InvalidImageName``: now; the name cannot be parsed and a pod's image never changes.
- ``CreateContainerConfigError`` for a missing Secret, ConfigMap or key: at the timeout,
  since it is often applied beside the Execution (a GitOps sync's order, a secret syncer);
  the chart's admission policy checks that the user may read it, not that it exists.
- ``CreateContainerConfigError`` from ``runAsNonRoot`` and the image's user: now; both the
  image and the pod's security are fixed.
- ``CreateContainerError``: at the timeout.
- A restarted container that cannot start or exits non-zero (``RunContainerError``,
  ``CrashLoopBackOff``: one of the sidecars): after its third failure, or at the timeout
  if that comes first. Our sidecars retry storage themselves, so an exit is a broken image
  or setting, never a blip. Config for a start error, out_of_memory for an OOM kill,
  crash otherwise.
- A regular init container that exited non-zero: now; a pod that never restarts does not
  run it again. Kinds as above.
- ``Unschedulable``: at the timeout (an autoscaler may add a node); quota.
- The input fetcher exiting with one of the checkout's codes (R63): now, with the git
  server's words it left as its termination message; refused credentials are auth, a
  missing repository or ref config, a server still unreachable after the fetcher's own
  retries transient, anything else git said config.

A pod held by scheduling gates (R73: Kueue's ``kueue.x-k8s.io/admission``, or any other
gate) is queued, not in trouble: no deadline runs while a gate is on it, and once the gates
are gone the pending timeout counts from then (``ungated_at``), not from the pod's creation.

A slow start with no trouble (``ContainerCreating`` during a long pull,
``PodInitializing`` while inputs download) is left to run, however long it takes. The
container's words are untrusted (a registry's reply, a sidecar's log tail through
``FallbackToLogsOnError``): cleaned and cut (R56).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from agentjobs.contract.text import agent_text
from agentjobs.kube import in_pod, pod_state
from agentjobs.kube.pod_state import Stage
from agentjobs.kube.pods import FETCHER_CONTAINER
from agentjobs.models.contract import FailureKind, SystemFailure

# The kubelet keeps a log-tail termination message within 2 KiB; a file's may be 4 KiB.
MESSAGE_BYTES = 2048
# A restarted container ends its phase at its third failure to start or to keep running.
FAILURES_BEFORE_GIVING_UP = 3
CRASH_LOOP = "CrashLoopBackOff"
INIT_FAILED = "InitContainerFailed"
UNSCHEDULABLE = "Unschedulable"

_PULL_ERRORS = frozenset({"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"})
_INVALID_IMAGE = "InvalidImageName"
_CONFIG_ERRORS = frozenset({"CreateContainerConfigError", "CreateContainerError"})
# R63: why the fetcher could not check a repository out, by its exit code.
_CHECKOUT_FAILURES = {
    in_pod.CHECKOUT_EXIT_CODES[fault]: (kind, code)
    for fault, kind, code in (
        ("auth", FailureKind.AUTH, "GitAuthenticationFailed"),
        ("permission", FailureKind.AUTH, "GitPermissionDenied"),
        ("not_found", FailureKind.CONFIG, "GitNotFound"),
        ("network", FailureKind.TRANSIENT, "GitUnreachable"),
        ("other", FailureKind.CONFIG, "GitCheckoutFailed"),
    )
}
_START_ERRORS = frozenset({"StartError", "ContainerCannotRun", "RunContainerError"})
# Whole words only: a pull error names addresses and ports ("10.87.0.2:34012"), which must
# not read as a registry's 401.
_REFUSED = re.compile(r"\b(unauthorized|authentication|denied|forbidden|401|403)\b", re.IGNORECASE)
# How the kubelet words a runAsNonRoot check against the image's user.
_NON_ROOT_WORDS = ("runAsNonRoot", "non-root policy")


class Ends(Enum):
    """When a trouble ends its phase."""

    NOW = "now"
    AT_TIMEOUT = "at the pending timeout"


@dataclass(frozen=True)
class Trouble:
    """What keeps one container (None: the pod, unscheduled) from starting."""

    container: str | None
    code: str  # the kubelet's or the scheduler's reason, or CRASH_LOOP / INIT_FAILED
    message: str  # the phase's error, with the container's own words in it
    kind: FailureKind
    ends: Ends

    def failure(self) -> SystemFailure:
        return SystemFailure(kind=self.kind, code=self.code, message=self.message)


@dataclass(frozen=True)
class Started:
    """The main container has started (or ran), or the kubelet ended the pod for a reason
    of its own (a deadline, an eviction) that the run's other rules judge."""


@dataclass(frozen=True)
class Waiting:
    """Not started yet; ``trouble`` is what stands in the way, if anything does, and
    ``deadline`` when it ends the phase at the latest; ``gates`` the scheduling gates that
    hold the pod back (R73), which no deadline counts against."""

    trouble: Trouble | None
    deadline: datetime | None
    gates: tuple[str, ...] = ()


def scheduling_gates(pod: dict[str, Any]) -> tuple[str, ...]:
    """The names of the gates the scheduler waits on before it places the pod."""
    gates = pod.get("spec", {}).get("schedulingGates") or []
    return tuple(str(gate.get("name")) for gate in gates if isinstance(gate, dict))


def decide(
    pod: dict[str, Any],
    container: str,
    *,
    now: datetime,
    timeout: float,
    earlier: Trouble | None = None,
    ungated_at: datetime | None = None,
) -> Started | Waiting | SystemFailure:
    """Whether ``container`` (the pod's main one) started, may still start, or will not.

    ``earlier`` is the trouble this pod showed when last looked at, so an image pull's
    back-off is reported with the pull error that caused it; ``ungated_at`` when its
    scheduling gates were seen gone, if it had any.
    """
    if pod_state.agent_state(pod, container).stage is not Stage.WAITING:
        if _main_ran(pod, container) or pod.get("status", {}).get("reason"):
            return Started()
        exited = [t for t in _troubles(pod, container, earlier) if t.code == INIT_FAILED]
        return exited[0].failure() if exited else Started()
    gates = scheduling_gates(pod)
    if gates:
        return Waiting(None, None, gates)
    troubles = _troubles(pod, container, earlier)
    urgent = [t for t in troubles if t.ends is Ends.NOW]
    if urgent:
        return urgent[0].failure()
    if not troubles:
        return Waiting(None, None)
    deadline = _deadline(pod, timeout, ungated_at)
    if deadline is not None and now >= deadline:
        return troubles[0].failure()
    return Waiting(troubles[0], deadline)


def waiting_message(pod_name: str, waiting: Waiting) -> str | None:
    """What the phase's status says while ``waiting`` has a trouble."""
    if waiting.trouble is None:
        return None
    message = f"{pod_name} has not started: {waiting.trouble.message}"
    if waiting.deadline is None:
        return message
    return f"{message} (the phase fails at {waiting.deadline:%H:%M:%S} UTC unless it starts)"


def _deadline(pod: dict[str, Any], timeout: float, ungated_at: datetime | None) -> datetime | None:
    """From the pod's creation, or from when its gates were seen gone if that is later, so
    that an operator's restart does not restart the clock and a queue's wait is not held
    against the pod."""
    created = pod_state.recorded_time(pod.get("metadata", {}).get("creationTimestamp"))
    if created is None:
        return None
    start = max(created, ungated_at) if ungated_at is not None else created
    return start + timedelta(seconds=timeout)


def _main_ran(pod: dict[str, Any], container: str) -> bool:
    for status in pod.get("status", {}).get("containerStatuses") or []:
        if status.get("name") == container:
            state = status.get("state") or {}
            return "running" in state or "terminated" in state or bool(status.get("lastState"))
    return False


def _troubles(pod: dict[str, Any], main: str, earlier: Trouble | None) -> list[Trouble]:
    """Every container's trouble, init containers first (they run first), then the pod's."""
    status = pod.get("status", {})
    found = []
    for init, statuses in ((True, "initContainerStatuses"), (False, "containerStatuses")):
        for container in status.get(statuses) or []:
            name = str(container.get("name"))
            restarted = _restarted(pod, name, init=init)
            trouble = _trouble(container, main, restarted=restarted, init=init)
            if trouble is not None and trouble.code == "ImagePullBackOff":
                trouble = _with_pull_error(trouble, earlier)
            if trouble is not None:
                found.append(trouble)
    unscheduled = _unscheduled(pod)
    return [*found, unscheduled] if unscheduled is not None else found


def _restarted(pod: dict[str, Any], name: str, *, init: bool) -> bool:
    """The kubelet starts the container again after it exits: a sidecar always, any
    container unless the pod's policy is Never (init containers only after a failure)."""
    spec = pod.get("spec", {})
    if init:
        for container in spec.get("initContainers") or []:
            if container.get("name") == name and container.get("restartPolicy") == "Always":
                return True
    return bool(spec.get("restartPolicy", "Always") != "Never")


def _trouble(status: dict[str, Any], main: str, *, restarted: bool, init: bool) -> Trouble | None:
    name = str(status.get("name"))
    state = status.get("state") or {}
    waiting = state.get("waiting") or {}
    reason = waiting.get("reason")
    words = _words(waiting.get("message") or reason or "")
    if reason in _PULL_ERRORS:
        kind = FailureKind.AUTH if _refused(words) else FailureKind.CONFIG
        return Trouble(
            name, reason, f"the {name} image cannot be pulled: {words}", kind, Ends.AT_TIMEOUT
        )
    if reason == _INVALID_IMAGE:
        message = f"the {name} image cannot be pulled: {words}"
        return Trouble(name, reason, message, FailureKind.CONFIG, Ends.NOW)
    if reason in _CONFIG_ERRORS:
        ends = Ends.NOW if any(w in words for w in _NON_ROOT_WORDS) else Ends.AT_TIMEOUT
        message = f"the {name} container cannot be configured: {words}"
        return Trouble(name, reason, message, FailureKind.CONFIG, ends)
    last = (status.get("lastState") or {}).get("terminated") or {}
    ended = state.get("terminated") or {}
    if restarted and (reason in (CRASH_LOOP, "RunContainerError") or _failed(ended)):
        failures = int(status.get("restartCount") or 0) + 1
        cause = ended or last or {"reason": reason, "message": waiting.get("message")}
        # The kubelet says RunContainerError right after each failed start and CrashLoopBackOff
        # while it backs off: once a start has failed, the same pod gives the same code.
        code = CRASH_LOOP if ended or last or reason == CRASH_LOOP else "RunContainerError"
        ends = Ends.NOW if failures >= FAILURES_BEFORE_GIVING_UP else Ends.AT_TIMEOUT
        times = "once" if failures == 1 else f"{failures} times"
        message = f"the {name} container failed {times} before the {main} started, {_exit(cause)}"
        return Trouble(name, code, message, _exit_kind(cause), ends)
    if init and not restarted and _failed(ended):
        checkout = _CHECKOUT_FAILURES.get(int(ended.get("exitCode") or 0))
        if name == FETCHER_CONTAINER and checkout is not None:
            said = _words(ended.get("message") or "the checkout failed")
            return Trouble(name, checkout[1], said, checkout[0], Ends.NOW)
        message = f"the {name} container failed before the {main} started, {_exit(ended)}"
        return Trouble(name, INIT_FAILED, message, _exit_kind(ended), Ends.NOW)
    return None


def _with_pull_error(backoff: Trouble, earlier: Trouble | None) -> Trouble:
    """The pull error behind a back-off, when it was seen: kubelets before 1.31 say only
    "Back-off pulling image" there."""
    if earlier is None or earlier.container != backoff.container:
        return backoff
    return earlier if earlier.code == "ErrImagePull" else backoff


def _failed(terminated: dict[str, Any]) -> bool:
    return bool(terminated) and terminated.get("exitCode") != 0


def _exit(terminated: dict[str, Any]) -> str:
    """``the last time with exit code 1 (Error): <its message>``, from a terminated state."""
    reason = terminated.get("reason") or "Error"
    code = terminated.get("exitCode")
    said = f"exit code {code} ({reason})" if code is not None else str(reason)
    message = terminated.get("message")
    return f"the last time with {said}" + (f": {_words(message)}" if message else "")


def _exit_kind(terminated: dict[str, Any]) -> FailureKind:
    reason = terminated.get("reason")
    if reason in _START_ERRORS:
        return FailureKind.CONFIG
    return FailureKind.OUT_OF_MEMORY if reason == "OOMKilled" else FailureKind.CRASH


def _refused(words: str) -> bool:
    return _REFUSED.search(words) is not None


def _words(text: object) -> str:
    """A container's (or the kubelet's) message, safe for a status and an Event."""
    return agent_text.cut(agent_text.clean(str(text)).strip(), MESSAGE_BYTES)


def _unscheduled(pod: dict[str, Any]) -> Trouble | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == UNSCHEDULABLE
        ):
            words = _words(condition.get("message") or "the pod cannot be scheduled")
            message = f"the pod cannot be scheduled: {words}"
            return Trouble(None, UNSCHEDULABLE, message, FailureKind.QUOTA, Ends.AT_TIMEOUT)
    return None
