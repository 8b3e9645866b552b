"""The unified TaskOutcome (R36).

Cases: a readable report that decided the phase gives an agent outcome with
terminal reason `finish_action`; every other end gives a system outcome;
auth, quota, config, rate-limit and transient kinds are `blocked` and
recoverable, others `failed`; auth and config need the user's action.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import outcome, phase
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.models.contract import (
    FailureKind,
    FailureReason,
    PhaseStatus,
    Report,
    ReportState,
    SideEffects,
    SystemFailure,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CLEAN = RunFacts(exit_code=0, stream_intact=True)


def resolve(report: Report, run: RunFacts = CLEAN) -> phase.PhaseResult:
    return phase.resolve_phase(
        report=report,
        run=run,
        output=None,
        recovery=RecoveryContext(phase_name="p", last_message=None),
        now=NOW,
    )


def test_r36_a_success_report_is_an_agent_success_ended_by_finish_action() -> None:
    report = Report(state=ReportState.SUCCESS, success=True, comments="Opened PR #42")
    result = resolve(report).task_outcome
    assert (result.status, result.source) == (TaskOutcomeStatus.SUCCESS, TaskOutcomeSource.AGENT)
    assert result.terminal_reason == "finish_action"
    assert result.summary == "Opened PR #42"
    assert result.reported_at == NOW


@pytest.mark.parametrize("word", [SideEffects.DENIED, SideEffects.FAILED])
def test_r36_a_success_whose_write_did_not_go_through_is_a_partial_success(
    word: SideEffects,
) -> None:
    report = Report(state=ReportState.SUCCESS, success=True, side_effects=word)
    result = resolve(report).task_outcome
    assert result.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert result.blockers[0].type == "side_effects"


def test_r36_a_failure_report_is_an_agent_failure() -> None:
    report = Report(
        state=ReportState.FAILURE,
        success=False,
        failure_reason=FailureReason.TASK,
        comments="The brief asks for two incompatible things",
    )
    result = resolve(report).task_outcome
    assert (result.status, result.source) == (TaskOutcomeStatus.FAILED, TaskOutcomeSource.AGENT)
    assert result.blockers[0].type == "agent_task"
    assert result.blockers[0].message == "The brief asks for two incompatible things"


def test_r36_an_unreadable_report_is_a_system_failure() -> None:
    report = Report(state=ReportState.UNREADABLE, warnings=["unreadable report: x"])
    result = resolve(report).task_outcome
    assert (result.status, result.source) == (TaskOutcomeStatus.FAILED, TaskOutcomeSource.SYSTEM)
    assert result.terminal_reason == "unreadable_report"


def test_r36_a_crash_after_a_success_report_is_the_systems_outcome() -> None:
    report = Report(state=ReportState.SUCCESS, success=True)
    result = resolve(report, RunFacts(exit_code=1, stream_intact=True)).task_outcome
    assert result.source is TaskOutcomeSource.SYSTEM
    assert result.terminal_reason == "exit_code_1"


def test_r36_no_report_on_a_clean_run_is_a_system_success() -> None:
    result = resolve(Report(state=ReportState.NOT_REPORTED)).task_outcome
    assert (result.status, result.source) == (TaskOutcomeStatus.SUCCESS, TaskOutcomeSource.SYSTEM)


def test_r36_a_cancelled_phase_has_an_unknown_outcome() -> None:
    run = RunFacts(exit_code=143, stream_intact=True, cancelled=True)
    result = resolve(Report(state=ReportState.NOT_REPORTED), run).task_outcome
    assert (result.status, result.terminal_reason) == (TaskOutcomeStatus.UNKNOWN, "cancelled")


def test_r36_an_interrupted_phase_is_blocked_and_recoverable() -> None:
    run = RunFacts(exit_code=None, stream_intact=False, interrupted=True)
    result = resolve(Report(state=ReportState.NOT_REPORTED), run)
    assert result.status is PhaseStatus.INTERRUPTED
    assert result.task_outcome.status is TaskOutcomeStatus.BLOCKED
    assert result.task_outcome.blockers[0].recoverable


@pytest.mark.parametrize(
    ("kind", "status", "needs_user_action"),
    [
        (FailureKind.AUTH, TaskOutcomeStatus.BLOCKED, True),
        (FailureKind.CONFIG, TaskOutcomeStatus.BLOCKED, True),
        (FailureKind.QUOTA, TaskOutcomeStatus.BLOCKED, False),
        (FailureKind.RATE_LIMIT, TaskOutcomeStatus.BLOCKED, False),
        (FailureKind.TRANSIENT, TaskOutcomeStatus.BLOCKED, False),
        (FailureKind.TIMEOUT, TaskOutcomeStatus.FAILED, False),
        (FailureKind.OUT_OF_MEMORY, TaskOutcomeStatus.FAILED, False),
        (FailureKind.CRASH, TaskOutcomeStatus.FAILED, False),
        (FailureKind.UNREADABLE_REPORT, TaskOutcomeStatus.FAILED, False),
        (FailureKind.STREAM_BROKEN, TaskOutcomeStatus.FAILED, False),
        (FailureKind.NO_USABLE_OUTPUT, TaskOutcomeStatus.FAILED, False),
    ],
)
def test_r36_each_failure_kind_maps_to_blocked_or_failed(
    kind: FailureKind, status: TaskOutcomeStatus, needs_user_action: bool
) -> None:
    failure = SystemFailure(
        kind=kind, code="CreateContainerConfigError", message="secret x missing"
    )
    result = outcome.from_failure(failure, now=NOW)
    assert result.status is status
    assert result.source is TaskOutcomeSource.SYSTEM
    assert result.needs_user_action is needs_user_action
    assert result.blockers[0].recoverable is (status is TaskOutcomeStatus.BLOCKED)
    assert result.terminal_reason == "CreateContainerConfigError"


def test_r36_the_outcome_serialises_in_camel_case_for_kubernetes() -> None:
    dumped = resolve(Report(state=ReportState.NOT_REPORTED)).task_outcome.model_dump(
        mode="json", by_alias=True
    )
    assert set(dumped) == {
        "status",
        "source",
        "summary",
        "blockers",
        "blockersOmitted",
        "needsUserAction",
        "confidence",
        "terminalReason",
        "reportedAt",
    }
