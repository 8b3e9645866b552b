"""R61: a phase pod whose main container has not started waits on, or ends its phase with
the container's own words, now or at the pending timeout.

Cases, each trouble with when it ends the phase and its kind: image pull errors (auth or
not) and a never-pull image at the timeout, an invalid image name now; a missing Secret,
ConfigMap or key at the timeout, a runAsNonRoot check against the image's user now; a
sidecar that cannot start or keeps exiting (CrashLoopBackOff, RunContainerError, a
terminated state between restarts, an OOM kill) at the timeout until its third failure,
then now; a regular init container's non-zero exit now, whether the pod has turned Failed
yet or not; an unschedulable pod at the timeout. Timing: the timeout counts from the pod's
creation, a slow start with no trouble is never ended. A started, ended or kubelet-ended
pod is left to the run's rules. A back-off is reported with the pull error seen before it.
The container's words are cleaned and cut; the first trouble that ends the phase now wins.
The status line while waiting names the pod, the trouble and the deadline.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentjobs.contract.resolution import pod_start
from agentjobs.contract.resolution.pod_start import Ends, Started, Trouble, Waiting
from agentjobs.models.contract import FailureKind, SystemFailure

CREATED = datetime(2026, 12, 1, 9, tzinfo=UTC)
TIMEOUT = 300.0
EARLY = CREATED + timedelta(seconds=5)
LATE = CREATED + timedelta(seconds=TIMEOUT)
SIDECAR = {"name": "harvester", "restartPolicy": "Always"}
FETCHER = {"name": "fetch-inputs"}
INITIALIZING = {"waiting": {"reason": "PodInitializing"}}


def status(name: str, state: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"name": name, "state": state, **more}


def pod(
    agent: dict[str, Any] | None = None,
    *init: dict[str, Any],
    phase: str = "Pending",
    **pod_status: Any,
) -> dict[str, Any]:
    """A phase pod: the harvester sidecar and the fetcher, as the operator makes them."""
    return {
        "metadata": {"creationTimestamp": "2026-12-01T09:00:00Z"},
        "spec": {"restartPolicy": "Never", "initContainers": [SIDECAR, FETCHER]},
        "status": {
            "phase": phase,
            "containerStatuses": [status("agent", agent or INITIALIZING)],
            "initContainerStatuses": list(init),
            **pod_status,
        },
    }


def waiting(reason: str, message: str | None = None) -> dict[str, Any]:
    return {"waiting": {"reason": reason, **({"message": message} if message else {})}}


def crash_looping(restarts: int, last: dict[str, Any]) -> dict[str, Any]:
    back_off = "back-off 10s restarting failed container=harvester pod=p-a1_ns(uid)"
    return status(
        "harvester",
        waiting("CrashLoopBackOff", back_off),
        restartCount=restarts,
        lastState={"terminated": last},
    )


START_ERROR = {
    "exitCode": 128,
    "reason": "StartError",
    "message": 'exec: "agentjobs": executable file not found in $PATH',
}
EXITED = {"exitCode": 1, "reason": "Error", "message": "agentjobs: error: no such bucket"}


def trouble_of(subject: dict[str, Any]) -> Trouble:
    decided = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    if isinstance(decided, SystemFailure):
        late = pod_start.decide(subject, "agent", now=LATE, timeout=TIMEOUT)
        assert late == decided
        return Trouble(None, decided.code, decided.message, decided.kind, Ends.NOW)
    assert isinstance(decided, Waiting) and decided.trouble is not None, decided
    assert decided.deadline == LATE
    assert decided.trouble.ends is Ends.AT_TIMEOUT
    return decided.trouble


@pytest.mark.parametrize(
    ("subject", "ends", "kind", "code", "words"),
    [
        (
            pod(waiting("ErrImagePull", 'failed to pull image "x": manifest unknown')),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "ErrImagePull",
            "the agent image cannot be pulled: failed to pull image",
        ),
        (
            pod(
                waiting(
                    "ErrImagePull",
                    "dial tcp: lookup registry.invalid on 10.255.255.53:53: "
                    "read udp 10.87.0.2:34012->10.255.255.53:53: i/o timeout",
                )
            ),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "ErrImagePull",
            "lookup registry.invalid",
        ),
        (
            pod(waiting("ImagePullBackOff", "pull access denied: 401 Unauthorized")),
            Ends.AT_TIMEOUT,
            FailureKind.AUTH,
            "ImagePullBackOff",
            "pull access denied",
        ),
        (
            pod(waiting("ErrImageNeverPull", 'image "x" is not present with pull policy Never')),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "ErrImageNeverPull",
            "pull policy Never",
        ),
        (
            pod(waiting("InvalidImageName", 'couldn\'t parse image name "Bad:Name!"')),
            Ends.NOW,
            FailureKind.CONFIG,
            "InvalidImageName",
            "the agent image cannot be pulled: couldn't parse",
        ),
        (
            pod(waiting("CreateContainerConfigError", 'secret "github-token" not found')),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "CreateContainerConfigError",
            'the agent container cannot be configured: secret "github-token" not found',
        ),
        (
            pod(waiting("CreateContainerConfigError", "couldn't find key token in Secret ns/s")),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "CreateContainerConfigError",
            "couldn't find key token",
        ),
        (
            pod(waiting("CreateContainerConfigError", 'configmap "prompts" not found')),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "CreateContainerConfigError",
            'configmap "prompts" not found',
        ),
        (
            pod(
                None,
                status(
                    "harvester",
                    waiting(
                        "CreateContainerConfigError",
                        "container has runAsNonRoot and image will run as root",
                    ),
                ),
            ),
            Ends.NOW,
            FailureKind.CONFIG,
            "CreateContainerConfigError",
            "the harvester container cannot be configured: container has runAsNonRoot",
        ),
        (
            pod(
                waiting(
                    "CreateContainerConfigError",
                    "container's runAsUser breaks non-root policy (pod: p, container: agent)",
                )
            ),
            Ends.NOW,
            FailureKind.CONFIG,
            "CreateContainerConfigError",
            "breaks non-root policy",
        ),
        (
            pod(waiting("CreateContainerError", "failed to reserve container name")),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "CreateContainerError",
            "failed to reserve container name",
        ),
        (
            pod(None, crash_looping(0, START_ERROR)),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "CrashLoopBackOff",
            "the harvester container failed once before the agent started, the last time "
            'with exit code 128 (StartError): exec: "agentjobs": executable file not found',
        ),
        (
            pod(None, crash_looping(2, START_ERROR)),
            Ends.NOW,
            FailureKind.CONFIG,
            "CrashLoopBackOff",
            "the harvester container failed 3 times before the agent started",
        ),
        (
            pod(None, crash_looping(1, EXITED)),
            Ends.AT_TIMEOUT,
            FailureKind.CRASH,
            "CrashLoopBackOff",
            "failed 2 times before the agent started, the last time with exit code 1 (Error): "
            "agentjobs: error: no such bucket",
        ),
        (
            pod(None, crash_looping(4, {"exitCode": 137, "reason": "OOMKilled"})),
            Ends.NOW,
            FailureKind.OUT_OF_MEMORY,
            "CrashLoopBackOff",
            "the last time with exit code 137 (OOMKilled)",
        ),
        (
            pod(None, status("harvester", {"terminated": EXITED}, restartCount=2)),
            Ends.NOW,
            FailureKind.CRASH,
            "CrashLoopBackOff",
            "failed 3 times",
        ),
        (
            pod(
                None,
                status(
                    "harvester",
                    waiting("RunContainerError", "failed to create task: exec format error"),
                ),
            ),
            Ends.AT_TIMEOUT,
            FailureKind.CONFIG,
            "RunContainerError",
            "the last time with RunContainerError: failed to create task: exec format error",
        ),
        (
            # As a real kubelet shows it just after the third failed start.
            pod(
                None,
                status(
                    "harvester",
                    waiting("RunContainerError", START_ERROR["message"]),
                    restartCount=2,
                    lastState={"terminated": START_ERROR},
                ),
            ),
            Ends.NOW,
            FailureKind.CONFIG,
            "CrashLoopBackOff",
            "failed 3 times before the agent started, the last time with exit code 128",
        ),
        (
            pod(
                None,
                status("harvester", {"running": {}}),
                status("fetch-inputs", {"terminated": EXITED}),
            ),
            Ends.NOW,
            FailureKind.CRASH,
            pod_start.INIT_FAILED,
            "the fetch-inputs container failed before the agent started, the last time with "
            "exit code 1 (Error): agentjobs: error: no such bucket",
        ),
        (
            pod(
                None,
                status("harvester", {"running": {}}),
                status("fetch-inputs", {"terminated": START_ERROR}),
            ),
            Ends.NOW,
            FailureKind.CONFIG,
            pod_start.INIT_FAILED,
            "exit code 128 (StartError)",
        ),
        (
            pod(
                waiting("Pending"),
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/1 nodes are available: 1 Insufficient cpu.",
                    }
                ],
            ),
            Ends.AT_TIMEOUT,
            FailureKind.QUOTA,
            "Unschedulable",
            "the pod cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.",
        ),
    ],
)
def test_r61_each_trouble_ends_its_phase_now_or_at_the_timeout_with_its_own_words(
    subject: dict[str, Any], ends: Ends, kind: FailureKind, code: str, words: str
) -> None:
    trouble = trouble_of(subject)
    assert (trouble.ends, trouble.kind, trouble.code) == (ends, kind, code)
    assert words in trouble.message
    late = pod_start.decide(subject, "agent", now=LATE, timeout=TIMEOUT)
    assert late == SystemFailure(kind=kind, code=code, message=trouble.message)


def test_r61_a_trouble_that_time_may_end_waits_until_the_timeout_from_the_pods_creation() -> None:
    subject = pod(waiting("ErrImagePull", "i/o timeout"))
    just_before = LATE - timedelta(seconds=1)
    decided = pod_start.decide(subject, "agent", now=just_before, timeout=TIMEOUT)
    assert isinstance(decided, Waiting) and decided.deadline == LATE
    assert isinstance(pod_start.decide(subject, "agent", now=LATE, timeout=TIMEOUT), SystemFailure)
    # The clock is the pod's: a short timeout has long passed for a pod an hour old.
    hour_later = CREATED + timedelta(hours=1)
    assert isinstance(pod_start.decide(subject, "agent", now=hour_later, timeout=4), SystemFailure)


@pytest.mark.parametrize(
    "subject",
    [
        pod(waiting("ContainerCreating")),
        pod(None, status("harvester", waiting("ContainerCreating"))),
        pod(None, status("harvester", {"running": {}}), status("fetch-inputs", {"running": {}})),
        # Restarted once, and running again: the crash is behind it.
        pod(
            None,
            status("harvester", {"running": {}}, restartCount=1, lastState={"terminated": EXITED}),
        ),
        pod(
            None,
            status("harvester", {"running": {}}),
            status("fetch-inputs", {"terminated": {"exitCode": 0}}),
        ),
    ],
)
def test_r61_a_slow_start_without_trouble_is_never_ended(subject: dict[str, Any]) -> None:
    for now in (EARLY, LATE, CREATED + timedelta(days=1)):
        assert pod_start.decide(subject, "agent", now=now, timeout=TIMEOUT) == Waiting(None, None)


@pytest.mark.parametrize(
    "subject",
    [
        pod({"running": {}}, phase="Running"),
        pod({"terminated": {"exitCode": 3}}, phase="Failed"),
        # The kubelet ended the pod for its own reason: the deadline's rules judge it.
        pod(
            INITIALIZING,
            status("fetch-inputs", {"terminated": {"exitCode": 137, "reason": "Error"}}),
            phase="Failed",
            reason="DeadlineExceeded",
        ),
        # An ended pod whose agent never ran, for no init container's fault.
        pod(INITIALIZING, status("fetch-inputs", {"terminated": {"exitCode": 0}}), phase="Failed"),
    ],
)
def test_r61_a_started_or_otherwise_ended_pod_is_left_to_the_run_rules(
    subject: dict[str, Any],
) -> None:
    assert pod_start.decide(subject, "agent", now=LATE, timeout=TIMEOUT) == Started()


def test_r61_an_init_container_that_failed_ends_the_phase_once_the_pod_has_failed_too() -> None:
    subject = pod(INITIALIZING, status("fetch-inputs", {"terminated": EXITED}), phase="Failed")
    decided = pod_start.decide(subject, "grader", now=EARLY, timeout=TIMEOUT)
    assert isinstance(decided, SystemFailure)
    # The main container is named as it is: here a grader's pod.
    grader = pod(INITIALIZING, status("fetch-inputs", {"terminated": EXITED}), phase="Failed")
    grader["status"]["containerStatuses"] = [status("grader", INITIALIZING)]
    failed = pod_start.decide(grader, "grader", now=EARLY, timeout=TIMEOUT)
    assert isinstance(failed, SystemFailure) and failed.code == pod_start.INIT_FAILED
    assert "before the grader started" in failed.message


def test_r61_a_pods_own_restart_policy_makes_its_init_containers_restarted() -> None:
    subject = pod(None, status("fetch-inputs", {"terminated": EXITED}, restartCount=2))
    subject["spec"]["restartPolicy"] = "OnFailure"
    failure = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    assert isinstance(failure, SystemFailure) and failure.code == pod_start.CRASH_LOOP


def test_r61_a_back_off_is_reported_with_the_pull_error_seen_before_it() -> None:
    pulling = pod(waiting("ErrImagePull", 'rpc error: code = NotFound desc = "x:1" not found'))
    first = pod_start.decide(pulling, "agent", now=EARLY, timeout=TIMEOUT)
    assert isinstance(first, Waiting) and first.trouble is not None
    backing_off = pod(waiting("ImagePullBackOff", 'Back-off pulling image "x:1"'))
    later = pod_start.decide(backing_off, "agent", now=LATE, timeout=TIMEOUT, earlier=first.trouble)
    assert later == first.trouble.failure()
    # After an operator's restart nothing was seen: a 1.31+ kubelet's back-off says it all.
    wrapped = 'Back-off pulling image "x:1": ErrImagePull: rpc error: code = NotFound'
    own = pod_start.decide(
        pod(waiting("ImagePullBackOff", wrapped)), "agent", now=LATE, timeout=TIMEOUT
    )
    assert isinstance(own, SystemFailure) and own.code == "ImagePullBackOff"
    assert wrapped in own.message
    # Another container's pull error says nothing about this one.
    other = Trouble("harvester", "ErrImagePull", "elsewhere", FailureKind.CONFIG, Ends.AT_TIMEOUT)
    alone = pod_start.decide(backing_off, "agent", now=LATE, timeout=TIMEOUT, earlier=other)
    assert isinstance(alone, SystemFailure) and 'Back-off pulling image "x:1"' in alone.message


def test_r56_a_containers_words_are_cleaned_and_cut() -> None:
    said = "\x1b]0;owned\x07bad\u202eexit " + "é" * 3000
    subject = pod(None, crash_looping(2, {"exitCode": 1, "reason": "Error", "message": said}))
    failure = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    assert isinstance(failure, SystemFailure)
    assert "\x1b" not in failure.message and "\x07" not in failure.message
    assert "\u202e" not in failure.message
    assert "]0;ownedbadexit é" in failure.message
    said_part = failure.message.split("(Error): ", 1)[1]
    assert len(said_part.encode()) <= pod_start.MESSAGE_BYTES


def test_r61_the_first_trouble_that_ends_the_phase_now_wins() -> None:
    subject = pod(
        waiting("InvalidImageName", "couldn't parse image name"),
        status("harvester", waiting("ErrImagePull", "i/o timeout")),
    )
    failure = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    assert isinstance(failure, SystemFailure) and failure.code == "InvalidImageName"
    # At the timeout, the first trouble in start order (an init container's) is named.
    both = pod(
        waiting("ErrImagePull", "agent's pull"),
        status("harvester", waiting("ErrImagePull", "harvester's pull")),
    )
    late = pod_start.decide(both, "agent", now=LATE, timeout=TIMEOUT)
    assert isinstance(late, SystemFailure) and "harvester's pull" in late.message


def test_r61_the_status_says_what_stands_in_the_way_and_until_when() -> None:
    decided = pod_start.decide(
        pod(None, crash_looping(0, START_ERROR)), "agent", now=EARLY, timeout=TIMEOUT
    )
    assert isinstance(decided, Waiting)
    message = pod_start.waiting_message("p-a1", decided)
    assert message is not None
    assert message.startswith("p-a1 has not started: the harvester container failed once")
    assert message.endswith("(the phase fails at 09:05:00 UTC unless it starts)")
    assert pod_start.waiting_message("p-a1", Waiting(None, None)) is None


@pytest.mark.parametrize(
    ("code", "kind", "named"),
    [
        (10, FailureKind.AUTH, "GitAuthenticationFailed"),
        (11, FailureKind.AUTH, "GitPermissionDenied"),
        (12, FailureKind.CONFIG, "GitNotFound"),
        (13, FailureKind.TRANSIENT, "GitUnreachable"),
        (14, FailureKind.CONFIG, "GitCheckoutFailed"),
    ],
)
def test_r63_a_checkout_the_fetcher_could_not_make_ends_the_phase_now_in_gits_words(
    code: int, kind: FailureKind, named: str
) -> None:
    said = "could not check out service: remote: Repository not found."
    ended = {"exitCode": code, "reason": "Error", "message": said}
    subject = pod(INITIALIZING, status("fetch-inputs", {"terminated": ended}))
    decided = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    assert decided == SystemFailure(kind=kind, code=named, message=said)


def test_r63_the_checkout_codes_are_read_only_from_the_fetcher() -> None:
    ended = {"exitCode": 10, "reason": "Error", "message": "something else"}
    other = {"name": "setup"}
    subject = pod(INITIALIZING, status("setup", {"terminated": ended}))
    subject["spec"]["initContainers"].append(other)
    decided = pod_start.decide(subject, "agent", now=EARLY, timeout=TIMEOUT)
    assert isinstance(decided, SystemFailure)
    assert (decided.kind, decided.code) == (FailureKind.CRASH, pod_start.INIT_FAILED)


def gated(*gates: str) -> dict[str, Any]:
    """A pod the scheduler has not placed: held by ``gates``, no container has a status."""
    held = pod()
    held["spec"]["schedulingGates"] = [{"name": gate} for gate in gates]
    held["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
    }
    return held


def test_r73_a_gated_pod_waits_queued_however_long_its_gates_hold_it() -> None:
    subject = gated("kueue.x-k8s.io/admission", "example.com/budget")
    for now in (EARLY, LATE, CREATED + timedelta(days=3)):
        decided = pod_start.decide(subject, "agent", now=now, timeout=TIMEOUT)
        assert decided == Waiting(None, None, ("kueue.x-k8s.io/admission", "example.com/budget"))


def test_r73_once_the_gates_are_gone_the_pending_timeout_counts_from_then() -> None:
    subject = pod(waiting("ErrImagePull", "i/o timeout"))
    ungated = CREATED + timedelta(hours=2)
    deadline = ungated + timedelta(seconds=TIMEOUT)
    decided = pod_start.decide(subject, "agent", now=ungated, timeout=TIMEOUT, ungated_at=ungated)
    assert isinstance(decided, Waiting) and decided.deadline == deadline and decided.gates == ()
    late = pod_start.decide(subject, "agent", now=deadline, timeout=TIMEOUT, ungated_at=ungated)
    assert isinstance(late, SystemFailure)
    # A release recorded before the pod was made (an earlier attempt's) moves nothing.
    early = pod_start.decide(
        subject, "agent", now=EARLY, timeout=TIMEOUT, ungated_at=CREATED - timedelta(hours=1)
    )
    assert isinstance(early, Waiting) and early.deadline == LATE


def test_r73_the_gates_are_read_by_name_and_a_pod_without_any_has_none() -> None:
    assert pod_start.scheduling_gates(gated("a", "b")) == ("a", "b")
    assert pod_start.scheduling_gates(pod()) == ()
