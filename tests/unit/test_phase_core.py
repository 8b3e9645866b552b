"""The phase core: the step a runner takes next, and the run facts of every way an attempt
ends, with each precedence between the user's stops and the pod's own signals.

Cases: each step from the status alone (ended before grading before concluding before
preparing or running; an earlier attempt's finished evaluation is not grading); stops are
never taken back; an attempt with no pod (stopped, refused; cancel over interrupt); a pod
gone (cancelled when asked, else interrupted with what was noticed: the chaos suite's pod
deleted while no runner watched); a pod that never starts (a disruption over R61, the
operator's own deletion to stop or to remove a stuck pod, R61's failure, still waiting); a
log read (exit code, termination failure, noticed interruption over it, cancel and
interrupt); the pod's final status (an eviction written after the exit, a deadline, a
stopped run untouched, a deletion asked for after the agent's end); retries withheld,
grading, a stopped grader, and what follows an evaluation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.contract.grading.evaluation import Evaluated
from agentjobs.contract.phase import phase_core, run_checkpoint
from agentjobs.contract.phase.phase_core import AfterEvaluation, Step, Stops
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.kube import pod_state
from agentjobs.kube.naming import ANNOTATION_DELETION_REQUESTED
from agentjobs.models.contract import EvaluationResult, FailureKind, PhaseStatus, SystemFailure
from agentjobs.models.outcomes import Evaluation, PhaseOutcome
from agentjobs.models.resource_status import PhaseResourceStatus, RunCheckpoint

PHASE = "demo-0-fix"
NOBODY = Stops()
CANCEL = Stops(cancel=True)
INTERRUPT = Stops(interrupt=True)
BOTH = Stops(cancel=True, interrupt=True)
REFUSED = SystemFailure(kind=FailureKind.CONFIG, code="BucketNotAllowed", message="no")
NOTICED = SystemFailure(kind=FailureKind.TRANSIENT, code="Evicted", message="evicted")
STARTED_AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def pod(
    state: dict[str, Any] | None = None, meta: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    statuses = [{"name": "agent", "state": state}] if state is not None else []
    return {"metadata": meta or {}, "status": {"containerStatuses": statuses, **status}}


WAITING = pod({"waiting": {"reason": "ContainerCreating"}})
DELETING = {"deletionTimestamp": "2026-12-01T09:00:30Z", "deletionGracePeriodSeconds": 30}


def evaluation(grader: str, result: EvaluationResult | None) -> Evaluation:
    return Evaluation(iteration=0, grader_pod=grader, result=result, started_at=STARTED_AT)


def checkpoint() -> RunCheckpoint:
    run = RunFacts(exit_code=0, stream_intact=True)
    return run_checkpoint.record(run, None, transcript_bytes=0, transcript_sha256="")


@pytest.mark.parametrize(
    ("status", "step"),
    [
        (PhaseResourceStatus(), Step.PREPARING),
        (PhaseResourceStatus(status=PhaseStatus.PENDING), Step.PREPARING),
        (PhaseResourceStatus(status=PhaseStatus.RUNNING, attempt=2), Step.PREPARING),
        (PhaseResourceStatus(status=PhaseStatus.RUNNING, pod_name=f"{PHASE}-a1"), Step.RUNNING),
        (
            PhaseResourceStatus(
                status=PhaseStatus.RUNNING, pod_name=f"{PHASE}-a1", run=checkpoint()
            ),
            Step.CONCLUDING,
        ),
        (
            PhaseResourceStatus(
                status=PhaseStatus.RUNNING,
                pod_name=f"{PHASE}-a1",
                run=checkpoint(),
                outcome=PhaseOutcome(evaluations=[evaluation(f"{PHASE}-g1", None)]),
            ),
            Step.GRADING,
        ),
        (
            PhaseResourceStatus(
                status=PhaseStatus.RUNNING,
                attempt=2,
                outcome=PhaseOutcome(
                    evaluations=[evaluation(f"{PHASE}-g1", EvaluationResult.NEEDS_REVISION)]
                ),
            ),
            Step.PREPARING,
        ),
        (
            PhaseResourceStatus(
                status=PhaseStatus.FAILED,
                run=checkpoint(),
                outcome=PhaseOutcome(evaluations=[evaluation(f"{PHASE}-g1", None)]),
            ),
            Step.ENDED,
        ),
        *[
            (PhaseResourceStatus(status=ended), Step.ENDED)
            for ended in sorted(phase_core.phase_status.TERMINAL)
        ],
    ],
)
def test_the_next_step_is_read_from_the_status_alone(
    status: PhaseResourceStatus, step: Step
) -> None:
    assert phase_core.next_step(status, phase_resource=PHASE) is step


def test_a_stop_once_asked_is_never_taken_back() -> None:
    assert not NOBODY.requested
    assert CANCEL.adding(interrupt=True) == BOTH
    assert BOTH.adding() == BOTH
    assert INTERRUPT.adding(cancel=False).requested


@pytest.mark.parametrize(
    ("stops", "refusal", "cancelled", "interrupted"),
    [
        (NOBODY, REFUSED, False, False),
        (CANCEL, None, True, False),
        (INTERRUPT, None, False, True),
        (BOTH, None, True, False),  # R22 over R22a
    ],
)
def test_an_attempt_that_made_no_pod(
    stops: Stops, refusal: SystemFailure | None, cancelled: bool, interrupted: bool
) -> None:
    run = phase_core.not_started(stops, refusal)
    assert (run.exit_code, run.stream_intact) == (None, False)
    assert (run.cancelled, run.interrupted, run.system_failure) == (cancelled, interrupted, refusal)


@pytest.mark.parametrize(
    ("stops", "cancelled", "failure"),
    [
        (NOBODY, False, NOTICED),  # deleted while no runner watched: interrupted, R22a
        (INTERRUPT, False, NOTICED),
        (CANCEL, True, None),
        (BOTH, True, None),
    ],
)
def test_a_pod_gone_is_cancelled_when_asked_and_interrupted_otherwise(
    stops: Stops, cancelled: bool, failure: SystemFailure | None
) -> None:
    run = phase_core.vanished(stops, NOTICED)
    assert (run.cancelled, run.interrupted, run.system_failure) == (
        cancelled,
        not cancelled,
        failure,
    )
    assert run.exit_code is None and not run.stream_intact


def test_a_pod_that_may_still_start_has_no_run_facts_yet() -> None:
    assert phase_core.never_starts(WAITING, None, NOBODY, deleted_by_operator=False) is None


def test_a_pod_that_will_never_start_ends_the_attempt_with_its_failure() -> None:
    stuck = SystemFailure(kind=FailureKind.CONFIG, code="ErrImagePull", message="no image")
    run = phase_core.never_starts(WAITING, stuck, NOBODY, deleted_by_operator=False)
    assert run == RunFacts(exit_code=None, stream_intact=False, system_failure=stuck)
    # Removing such a pod is the operator's deletion, no interruption.
    removed = pod({"waiting": {}}, DELETING)
    assert phase_core.never_starts(removed, stuck, NOBODY, deleted_by_operator=True) == run


def test_a_disruption_before_the_start_interrupts_even_a_pod_that_could_not_start() -> None:
    evicted = pod({"waiting": {}}, reason="Evicted", message="low on disk")
    stuck = SystemFailure(kind=FailureKind.CONFIG, code="ErrImagePull", message="no image")
    run = phase_core.never_starts(evicted, stuck, NOBODY, deleted_by_operator=False)
    assert run is not None and run.interrupted and not run.cancelled
    assert run.system_failure is not None and run.system_failure.code == "Evicted"


def test_a_deletion_by_someone_else_before_the_start_interrupts() -> None:
    deleted = pod({"waiting": {}}, DELETING)
    run = phase_core.never_starts(deleted, None, NOBODY, deleted_by_operator=False)
    assert run is not None and run.interrupted
    assert run.system_failure is not None and run.system_failure.code == "PodDeleted"


@pytest.mark.parametrize(("stops", "cancelled"), [(CANCEL, True), (INTERRUPT, False), (BOTH, True)])
def test_the_operators_deletion_to_stop_a_waiting_pod_ends_it_as_the_user_asked(
    stops: Stops, cancelled: bool
) -> None:
    deleted = pod({"waiting": {}}, DELETING)
    run = phase_core.never_starts(deleted, None, stops, deleted_by_operator=True)
    assert run is not None
    assert (run.cancelled, run.interrupted, run.system_failure) == (cancelled, not cancelled, None)


def ended(exit_code: int, **terminated: Any) -> dict[str, Any]:
    return pod({"terminated": {"exitCode": exit_code, **terminated}})


def read(
    manifest: dict[str, Any], stops: Stops = NOBODY, noticed: SystemFailure | None = None
) -> RunFacts:
    state = pod_state.agent_state(manifest, "agent")
    return phase_core.log_read(
        manifest, state, stops, stream_intact=True, noticed=noticed, cli_error=None
    )


def test_a_log_read_to_a_clean_exit_has_no_failure() -> None:
    run = read(ended(0))
    assert run == RunFacts(exit_code=0, stream_intact=True)
    assert run.exited_cleanly


def test_a_log_read_takes_the_termination_failure_unless_an_interruption_was_noticed() -> None:
    oom = ended(137, reason="OOMKilled")
    failure = read(oom).system_failure
    assert failure is not None and failure.kind is FailureKind.OUT_OF_MEMORY
    cut = read(oom, noticed=NOTICED)
    assert (cut.interrupted, cut.system_failure) == (True, NOTICED)


def test_a_log_read_while_the_agent_still_runs_has_no_exit_code() -> None:
    run = read(pod({"running": {}}), noticed=NOTICED)
    assert (run.exit_code, run.interrupted, run.system_failure) == (None, True, NOTICED)


@pytest.mark.parametrize(
    ("stops", "cancelled", "interrupted"),
    [(CANCEL, True, False), (INTERRUPT, False, True), (BOTH, True, True)],
)
def test_a_log_read_records_what_the_user_asked(
    stops: Stops, cancelled: bool, interrupted: bool
) -> None:
    run = read(ended(143), stops)
    assert (run.cancelled, run.interrupted) == (cancelled, interrupted)


def final(
    run: RunFacts, manifest: dict[str, Any], stops: Stops = NOBODY, *, ours: bool = False
) -> RunFacts:
    return phase_core.with_final_status(run, manifest, "agent", stops, deleted_by_operator=ours)


def test_an_eviction_the_kubelet_writes_after_the_exit_interrupts_the_run() -> None:
    evicted = {**ended(0), "status": {**ended(0)["status"], "reason": "Evicted"}}
    run = final(RunFacts(exit_code=0, stream_intact=True), evicted)
    assert run.interrupted and run.system_failure is not None
    assert run.system_failure.code == "Evicted"


def test_a_deadline_in_the_final_status_is_the_runs_failure() -> None:
    timed_out = {**ended(137), "status": {**ended(137)["status"], "reason": "DeadlineExceeded"}}
    run = final(RunFacts(exit_code=137, stream_intact=True), timed_out)
    assert not run.interrupted and run.system_failure is not None
    assert run.system_failure.kind is FailureKind.TIMEOUT


def test_a_stopped_or_unfinished_run_is_not_changed_by_the_final_status() -> None:
    evicted = {**ended(0), "status": {**ended(0)["status"], "reason": "Evicted"}}
    cancelled = RunFacts(exit_code=0, stream_intact=True, cancelled=True)
    assert final(cancelled, evicted, CANCEL) is cancelled
    running = RunFacts(exit_code=None, stream_intact=False)
    assert final(running, pod({"running": {}}, DELETING)) is running


def test_a_deletion_asked_for_after_the_agents_end_is_no_interruption() -> None:
    # The kubelet's last grace-0 delete moves deletionTimestamp past the exit (chaos seed).
    done = ended(143, finishedAt="2026-12-01T09:00:03Z")
    late = {
        "deletionTimestamp": "2026-12-01T09:01:00Z",
        "deletionGracePeriodSeconds": 0,
        "annotations": {ANNOTATION_DELETION_REQUESTED: "2026-12-01T09:00:30Z"},
    }
    run = final(RunFacts(exit_code=143, stream_intact=True), {**done, "metadata": late})
    assert not run.interrupted
    early = {**late, "annotations": {ANNOTATION_DELETION_REQUESTED: "2026-12-01T09:00:02Z"}}
    cut = final(RunFacts(exit_code=143, stream_intact=True), {**done, "metadata": early})
    assert cut.interrupted
    assert not final(
        RunFacts(exit_code=143, stream_intact=True), {**done, "metadata": early}, ours=True
    ).interrupted


@pytest.mark.parametrize(
    ("stops", "withheld"), [(NOBODY, False), (CANCEL, True), (INTERRUPT, True)]
)
def test_an_attempt_the_user_stopped_is_not_retried(stops: Stops, withheld: bool) -> None:
    assert phase_core.retry_withheld(stops) is withheld


@pytest.mark.parametrize(
    ("concluded", "stops", "graded"),
    [
        (PhaseStatus.COMPLETED, NOBODY, True),
        (PhaseStatus.COMPLETED, INTERRUPT, True),  # the evaluation records the interrupt
        (PhaseStatus.COMPLETED, CANCEL, False),
        (PhaseStatus.FAILED, NOBODY, False),
        (PhaseStatus.INTERRUPTED, NOBODY, False),
        (None, NOBODY, False),
    ],
)
def test_only_a_completed_attempt_not_cancelled_is_graded(
    concluded: PhaseStatus | None, stops: Stops, graded: bool
) -> None:
    assert phase_core.graded(concluded, stops) is graded


def test_a_grader_asked_to_stop_is_interrupted() -> None:
    assert not phase_core.grading_stopped(NOBODY)
    assert phase_core.grading_stopped(CANCEL) and phase_core.grading_stopped(INTERRUPT)
    clean = RunFacts(exit_code=0, stream_intact=True)
    assert not phase_core.grader_run(clean, NOBODY, None).interrupted
    assert phase_core.grader_run(clean, INTERRUPT, None).interrupted
    cancelled = RunFacts(exit_code=None, stream_intact=False, cancelled=True)
    assert phase_core.grader_run(cancelled, CANCEL, None).interrupted
    cli = SystemFailure(kind=FailureKind.AUTH, code="401", message="no key")
    graded = phase_core.grader_run(RunFacts(exit_code=1, stream_intact=True), NOBODY, cli)
    assert (graded.exit_code, graded.cli_error, graded.interrupted) == (1, cli, False)


@pytest.mark.parametrize(
    ("result", "stops", "handed_on", "following"),
    [
        (EvaluationResult.NEEDS_REVISION, NOBODY, True, AfterEvaluation.REVISE),
        (EvaluationResult.NEEDS_REVISION, NOBODY, False, AfterEvaluation.END),
        (EvaluationResult.NEEDS_REVISION, CANCEL, True, AfterEvaluation.CANCELLED),
        (EvaluationResult.SATISFIED, CANCEL, True, AfterEvaluation.CANCELLED),
        (EvaluationResult.SATISFIED, NOBODY, True, AfterEvaluation.END),
        (EvaluationResult.INTERRUPTED, INTERRUPT, True, AfterEvaluation.END),
    ],
)
def test_what_follows_an_evaluation(
    result: EvaluationResult, stops: Stops, handed_on: bool, following: AfterEvaluation
) -> None:
    evaluated = Evaluated(0, result)
    assert phase_core.after_evaluation(evaluated, stops, handed_on=handed_on) is following
