"""R57: every status fits its byte budget, its texts cut and its lists counted.

Cases: an ordinary status is written as it is, and fitting twice changes
nothing; twenty evaluations of fifty verbose criteria, a run record holding a
megabyte of comments and of last message, and text that grows when escaped
all fit the budget as the API's JSON; the latest evaluation keeps its
criteria longest and the others count what they leave out; cut lists keep
their counts when they are cut again; an Execution with a huge outcome and
notification errors fits; texts are cut between whole characters and a lone
surrogate is replaced; a list of names is named in part and counted; the R33
error for 12,345 empty files names three; a grader's 10,000 unmet criteria
give 20 blockers and a count; the API's refusals for size are told apart; a
status's size is that of the JSON the API adapter sends, a lone surrogate included.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from agentjobs.adapters.kube import ApiError
from agentjobs.contract.artifacts import artifact_rule
from agentjobs.contract.grading import phase_end, record
from agentjobs.contract.grading.evaluation import Evaluated
from agentjobs.contract.outcome import status_budget
from agentjobs.contract.text import agent_text
from agentjobs.kube.status_patch import dump_status
from agentjobs.models.contract import (
    Blocker,
    Criterion,
    EvaluationResult,
    ExecutionStatus,
    PhaseStatus,
    Report,
    ReportState,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)
from agentjobs.models.notifications import NotificationRecord
from agentjobs.models.outcomes import PhaseOutcome
from agentjobs.models.resource_status import (
    Condition,
    ExecutionResourceStatus,
    PhaseResourceStatus,
    RunCheckpoint,
)
from agentjobs.runtime import errors

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BUDGET = status_budget.STATUS_BUDGET


def _criteria(count: int, size: int) -> list[Criterion]:
    return [
        Criterion(name=f"criterion {i} " + "n" * size, met=False, feedback="f" * size)
        for i in range(count)
    ]


def _outcome(iterations: int, *, criteria: int, size: int) -> PhaseOutcome:
    recorded = PhaseOutcome()
    for iteration in range(iterations):
        recorded = record.started(
            recorded, iteration=iteration, grader_pod=f"g{iteration}", now=NOW
        )
        recorded = record.finished(
            recorded,
            iteration=iteration,
            result=EvaluationResult.NEEDS_REVISION,
            explanation="e" * (1024 * 1024),
            criteria=_criteria(criteria, size),
            spent=None,
            now=NOW,
        )
    return recorded


def _condition(message: str) -> Condition:
    return Condition(type="Failed", status="True", reason="Failed", message=message,
                     last_transition_time=NOW)  # fmt: skip


def test_an_ordinary_status_is_written_as_it_is() -> None:
    status = PhaseResourceStatus(
        status=PhaseStatus.COMPLETED,
        report=Report(state=ReportState.SUCCESS, success=True, comments="done", warnings=["w"]),
        error=None,
        outcome=_outcome(2, criteria=3, size=10),
        conditions=[_condition("the phase completed")],
    )
    assert status_budget.fit_phase(status) == status


def test_twenty_evaluations_of_fifty_verbose_criteria_fit_the_budget() -> None:
    status = PhaseResourceStatus(
        status=PhaseStatus.FAILED, outcome=_outcome(20, criteria=60, size=2048)
    )
    assert status_budget.status_bytes(status) > 1024 * 1024  # as record.finished left it
    fitted = status_budget.fit_phase(status)
    assert status_budget.status_bytes(fitted) <= BUDGET
    assert fitted.outcome is not None
    assert [e.iteration for e in fitted.outcome.evaluations] == list(range(20))
    latest, earlier = fitted.outcome.evaluations[-1], fitted.outcome.evaluations[0]
    assert len(latest.criteria) > len(earlier.criteria)
    assert len(latest.criteria) + (latest.criteria_omitted or 0) == 60
    assert len(earlier.criteria) + (earlier.criteria_omitted or 0) == 60


def test_fitting_twice_changes_nothing() -> None:
    status = PhaseResourceStatus(outcome=_outcome(20, criteria=60, size=2048))
    fitted = status_budget.fit_phase(status)
    assert status_budget.fit_phase(fitted) == fitted


def test_a_run_record_with_a_megabyte_of_comments_and_last_message_fits() -> None:
    report = Report(
        state=ReportState.FAILURE,
        success=False,
        comments='\x01"' * (512 * 1024),  # six and two bytes each once escaped
        warnings=[f"warning {i} " + "w" * 2000 for i in range(5000)],
        blockers=[Blocker(type="t" * 4096, message="m" * 4096, recoverable=True)] * 20,
    )
    run = RunCheckpoint(
        stream_intact=True,
        report=report,
        last_message="é" * (1024 * 1024),
        transcript_bytes=1,
        transcript_sha256="ab",
    )
    status = PhaseResourceStatus(
        report=report, run=run, error="x" * 10**6, conditions=[_condition("y" * 10**6)]
    )
    fitted = status_budget.fit_phase(status)
    assert status_budget.status_bytes(fitted) <= BUDGET
    assert fitted.run is not None
    warnings = fitted.run.report.warnings
    assert warnings[-1] == f"(and {5000 - len(warnings) + 1:,} more)"


def test_text_that_grows_when_escaped_is_measured_as_sent() -> None:
    status = PhaseResourceStatus(error="😀" * 200_000)  # 800 kB of UTF-8, 2.4 MB escaped
    fitted = status_budget.fit_phase(status)
    assert fitted.error is not None and fitted.error.startswith("😀")
    assert status_budget.status_bytes(fitted) <= BUDGET


def test_cut_lists_keep_their_counts_when_cut_again() -> None:
    texts = [f"t{i}" for i in range(100)]
    once = status_budget.counted_texts(texts, listed=20, limit=1024)
    assert once[-1] == "(and 80 more)" and len(once) == 21
    assert status_budget.counted_texts(once, listed=20, limit=1024) == once
    assert status_budget.counted_texts(once, listed=5, limit=1024)[-1] == "(and 95 more)"
    kept, omitted = status_budget.criteria(_criteria(60, 1), limit=50, text=1024)
    again, omitted_again = status_budget.criteria(kept, limit=5, text=1024, omitted=omitted)
    assert (omitted, len(again), omitted_again) == (10, 5, 55)


def test_an_execution_with_a_huge_outcome_and_notification_errors_fits() -> None:
    outcome = TaskOutcome(
        status=TaskOutcomeStatus.FAILED,
        source=TaskOutcomeSource.AGENT,
        summary="s" * 10**6,
        blockers=[Blocker(type="t", message="m" * 10**5, recoverable=False)] * 30,
        terminal_reason="r" * 10**5,
        reported_at=NOW,
    )
    notification = NotificationRecord(
        notify=0, target="h", event="Finished", id="i",
        state="Pending", last_error="e" * 10**6,
    )  # fmt: skip
    status = ExecutionResourceStatus(
        status=ExecutionStatus.FAILED,
        task_outcome=outcome,
        notifications=[notification],
        conditions=[_condition("c" * 10**6)],
    )
    fitted = status_budget.fit_execution(status)
    assert status_budget.status_bytes(fitted) <= BUDGET
    assert fitted.task_outcome is not None
    assert len(fitted.task_outcome.blockers) == 20
    assert fitted.task_outcome.blockers_omitted == 10


def test_a_list_of_names_is_named_in_part_and_counted() -> None:
    names = [f"f{i}" for i in range(12_345)]
    assert agent_text.named_and_counted(names) == "f0, f1, f2 and 12,342 more"
    assert agent_text.named_and_counted(names[:3]) == "f0, f1, f2"


def test_r33_the_error_for_many_empty_files_names_three_and_counts_the_rest() -> None:
    context = artifact_rule.RecoveryContext(phase_name="p", last_message=None)
    paths = [f"dir/{i:05}-{'n' * 200}.txt" for i in range(12_345)]
    error = artifact_rule.nothing_usable_error(context, empty_paths=paths)
    assert "it wrote 12,345 empty files (" in error and "and 12,342 more)" in error
    assert len(error) < 1024


def test_a_grader_with_ten_thousand_unmet_criteria_gives_twenty_blockers_and_a_count() -> None:
    end = phase_end.phase_end(
        Evaluated(2, EvaluationResult.MAX_ITERATIONS_REACHED),
        criteria=_criteria(10_000, 10),
        explanation="no",
        agent_outcome=TaskOutcome(
            status=TaskOutcomeStatus.SUCCESS,
            source=TaskOutcomeSource.AGENT,
            summary="s",
            terminal_reason="finish_action",
            reported_at=NOW,
        ),
        max_iterations=3,
        now=NOW,
    )
    assert len(end.task_outcome.blockers) == 20
    assert end.task_outcome.blockers_omitted == 9_980


def test_the_apis_refusals_for_size_are_told_apart() -> None:
    assert errors.too_large(ApiError(413, "RequestEntityTooLarge", "limit is 3145728"))
    assert errors.too_large(ApiError(500, "InternalError", "etcdserver: request is too large"))
    assert errors.too_large(ApiError(422, "Invalid", "status.error: Too long: may not be more"))
    assert not errors.too_large(ApiError(422, "Invalid", "status.attempt: Invalid value"))
    assert not errors.too_large(ApiError(409, "Conflict", "the object has been modified"))


def test_a_status_is_measured_as_the_compact_escaped_json_that_is_sent() -> None:
    for comments in ("done", "fertig — 完了 🎉", "cut at a lone \ud83d surrogate"):
        report = Report(state=ReportState.SUCCESS, success=True, comments=comments)
        status = PhaseResourceStatus(report=report)
        sent = json.dumps(dump_status(status), separators=(",", ":"))  # as kube.py sends it
        assert status_budget.status_bytes(status) == len(sent)
