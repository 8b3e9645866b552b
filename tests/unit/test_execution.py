"""An execution's fields from its phases (R23-R27), R24 tested exhaustively.

Cases: the first phase that fails, is cancelled or interrupted ends the
execution (R23); the most severe side effect among completed phases, over
every combination (R24); what counts as a deliverable (R25); the failing
phase's word (R26); inherited phases of a resumed execution (R27).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from agentjobs.contract.execution import execution
from agentjobs.contract.execution.execution import PhaseRecord
from agentjobs.models.contract import (
    Artifact,
    ExecutionStatus,
    FailureClassification,
    FailureReason,
    PhaseStatus,
    SideEffects,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def artifact(kept_as: str | None = None) -> Artifact:
    return Artifact(path="a.md", title="a.md", size=1, kept_as=kept_as)  # type: ignore[arg-type]


def outcome(status: TaskOutcomeStatus = TaskOutcomeStatus.SUCCESS) -> TaskOutcome:
    return TaskOutcome(
        status=status,
        source=TaskOutcomeSource.AGENT,
        summary="s",
        terminal_reason="finish_action",
        reported_at=NOW,
    )


def done(name: str, **fields: object) -> PhaseRecord:
    fields.setdefault("artifacts", (artifact(),))
    fields.setdefault("task_outcome", outcome())
    return PhaseRecord(name=name, status=PhaseStatus.COMPLETED, **fields)  # type: ignore[arg-type]


# -- R23 status ----------------------------------------------------------------------


def test_r23_an_execution_with_phases_left_to_run_is_running() -> None:
    summary = execution.summarize([done("plan")], phase_count=2)
    assert summary.status is ExecutionStatus.RUNNING
    assert summary.current_phase is None
    running = execution.summarize(
        [done("plan"), PhaseRecord(name="build", status=PhaseStatus.RUNNING)], phase_count=2
    )
    assert running.current_phase == "build"
    assert running.task_outcome is None


def test_r23_all_phases_completed_completes_the_execution() -> None:
    summary = execution.summarize([done("plan"), done("build")], phase_count=2)
    assert summary.status is ExecutionStatus.COMPLETED
    assert summary.current_phase is None


@pytest.mark.parametrize(
    ("phase_status", "execution_status"),
    [
        (PhaseStatus.FAILED, ExecutionStatus.FAILED),
        (PhaseStatus.CANCELLED, ExecutionStatus.CANCELLED),
        (PhaseStatus.INTERRUPTED, ExecutionStatus.INTERRUPTED),
    ],
)
def test_r23_the_first_phase_that_ends_badly_ends_the_execution(
    phase_status: PhaseStatus, execution_status: ExecutionStatus
) -> None:
    ending = PhaseRecord(
        name="build", status=phase_status, task_outcome=outcome(TaskOutcomeStatus.FAILED)
    )
    summary = execution.summarize([done("plan"), ending], phase_count=3)
    assert summary.status is execution_status
    assert summary.current_phase == "build"
    assert summary.task_outcome == ending.task_outcome


# -- R24 reported side effects, exhaustively ---------------------------------------------

SEVERITY = [None, SideEffects.NONE, SideEffects.SUCCEEDED, SideEffects.DENIED, SideEffects.FAILED]
STATUSES = [PhaseStatus.COMPLETED, PhaseStatus.FAILED]


@pytest.mark.parametrize(
    "phases",
    list(itertools.product(itertools.product(SEVERITY, STATUSES), repeat=2))
    + list(itertools.product(itertools.product(SEVERITY, [PhaseStatus.COMPLETED]), repeat=3)),
)
def test_r24_the_most_severe_word_among_completed_phases_is_reported(
    phases: tuple[tuple[SideEffects | None, PhaseStatus], ...],
) -> None:
    records = [
        PhaseRecord(name=f"p{index}", status=status, reported_side_effects=word)
        for index, (word, status) in enumerate(phases)
    ]
    counted = [w for w, s in phases if s is PhaseStatus.COMPLETED and w is not None]
    expected = max(counted, key=SEVERITY.index) if counted else None
    assert execution.most_severe_side_effects(records) is expected


def test_r24_one_denied_write_is_not_hidden_by_another_phases_success() -> None:
    records = [
        done("a", reported_side_effects=SideEffects.SUCCEEDED),
        done("b", reported_side_effects=SideEffects.DENIED),
        done("c", reported_side_effects=SideEffects.NONE),
    ]
    summary = execution.summarize(records, phase_count=3)
    assert summary.reported_side_effects is SideEffects.DENIED
    assert summary.task_outcome is not None
    assert summary.task_outcome.status is TaskOutcomeStatus.PARTIAL_SUCCESS


def test_r24_a_failed_phases_word_is_not_counted() -> None:
    records = [
        done("a", reported_side_effects=SideEffects.NONE),
        PhaseRecord(name="b", status=PhaseStatus.FAILED, reported_side_effects=SideEffects.FAILED),
    ]
    assert execution.summarize(records, phase_count=2).reported_side_effects is SideEffects.NONE


# -- R25 deliverable produced ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "produced"),
    [
        (done("a"), True),
        (done("a", artifacts=()), False),
        (
            PhaseRecord(name="a", status=PhaseStatus.FAILED, artifacts=(artifact("failed_phase"),)),
            True,
        ),
        (PhaseRecord(name="a", status=PhaseStatus.FAILED), False),
        (
            PhaseRecord(name="a", status=PhaseStatus.CANCELLED, artifacts=(artifact("partial"),)),
            False,
        ),
        (
            PhaseRecord(name="a", status=PhaseStatus.INTERRUPTED, artifacts=(artifact("partial"),)),
            False,
        ),
    ],
)
def test_r25_completed_and_failed_phases_artifacts_count_partial_ones_do_not(
    record: PhaseRecord, produced: bool
) -> None:
    assert execution.summarize([record], phase_count=1).deliverable_produced is produced


def test_r25_a_failed_run_whose_work_survived_reads_failed_with_a_deliverable() -> None:
    failed = PhaseRecord(
        name="b",
        status=PhaseStatus.FAILED,
        artifacts=(artifact("failed_phase"),),
        failure_classification=FailureClassification.PLATFORM,
    )
    summary = execution.summarize([failed], phase_count=2)
    assert (summary.status, summary.deliverable_produced) == (ExecutionStatus.FAILED, True)


# -- R26 reported failure reason ---------------------------------------------------------------


def test_r26_the_failing_phases_word_and_classification_are_the_executions() -> None:
    failed = PhaseRecord(
        name="b",
        status=PhaseStatus.FAILED,
        failure_classification=FailureClassification.CORRECT_REFUSAL,
        reported_failure_reason=FailureReason.REFUSED,
    )
    summary = execution.summarize([done("a"), failed], phase_count=2)
    assert summary.reported_failure_reason is FailureReason.REFUSED
    assert summary.failure_classification is FailureClassification.CORRECT_REFUSAL


def test_r26_a_completed_or_cancelled_execution_has_no_failure_reason() -> None:
    cancelled = PhaseRecord(
        name="b", status=PhaseStatus.CANCELLED, reported_failure_reason=FailureReason.TASK
    )
    summary = execution.summarize([cancelled], phase_count=1)
    assert summary.reported_failure_reason is None
    assert summary.failure_classification is None


# -- R27 resumed executions ---------------------------------------------------------------------


def test_r27_inherited_phases_finish_the_execution_but_do_not_count_in_its_fields() -> None:
    inherited = done("plan", inherited=True, reported_side_effects=SideEffects.FAILED)
    own = done("build", artifacts=(), reported_side_effects=SideEffects.NONE)
    summary = execution.summarize([inherited, own], phase_count=2)
    assert summary.status is ExecutionStatus.COMPLETED
    assert summary.reported_side_effects is SideEffects.NONE
    assert summary.deliverable_produced is False
    assert summary.artifact_count == 0
