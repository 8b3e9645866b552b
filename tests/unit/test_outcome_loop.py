"""The outcome loop's rules as pure functions (R37, R40-R44).

Cases: only a completed agent iteration is graded (R37); each evaluation
result from the grade and the grader's run, at every iteration up to
maxIterations (R40); the phase from the loop's end: completed, failed
outcome_not_met with a partial_success and one blocker per unmet
criterion, failed platform, interrupted, and which files are kept how
(R41); the revision section and the evaluation JSON the next iteration
gets (R42); the status record, replayed without duplicates, its usage
summed, its texts cut, the Events' timing and messages (R43); an interrupt
during grading or between evaluations (R44).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from agentjobs.contract.grading import evaluation, phase_end, record, revision
from agentjobs.contract.grading.evaluation import Evaluated, GraderRun
from agentjobs.models.contract import (
    Criterion,
    EvaluationResult,
    FailureClassification,
    FailureKind,
    Grade,
    GradeState,
    PhaseStatus,
    SystemFailure,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
    Usage,
)
from agentjobs.models.outcomes import PhaseOutcome
from agentjobs.models.storage import HandoffRef

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
CLEAN = GraderRun(exit_code=0)
CRITERIA = [
    Criterion(name="coverage", met=True),
    Criterion(name="links", met=False, feedback="two links are dead"),
    Criterion(name="dates", met=False),
]
AGENT_OUTCOME = TaskOutcome(
    status=TaskOutcomeStatus.SUCCESS,
    source=TaskOutcomeSource.AGENT,
    summary="notes written",
    terminal_reason="finish_action",
    reported_at=NOW,
)


def grade(state: GradeState, explanation: str | None = "why") -> Grade:
    return Grade(state=state, explanation=explanation, criteria=CRITERIA)


def evaluate(
    state: GradeState, run: GraderRun = CLEAN, iteration: int = 0, of: int = 3
) -> Evaluated:
    return evaluation.evaluate(grade(state), run, iteration=iteration, max_iterations=of)


# -- R37 ---------------------------------------------------------------------


@pytest.mark.parametrize("status", list(PhaseStatus))
def test_r37_only_a_completed_agent_iteration_is_graded(status: PhaseStatus) -> None:
    assert evaluation.is_graded(status) is (status is PhaseStatus.COMPLETED)


# -- R40 ---------------------------------------------------------------------


def test_r40_satisfied_as_graded_at_any_iteration() -> None:
    for iteration in range(3):
        evaluated = evaluate(GradeState.SATISFIED, iteration=iteration)
        assert evaluated.result is EvaluationResult.SATISFIED
        assert evaluated.next_iteration is None


def test_r40_needs_revision_with_iterations_left_starts_the_next_one() -> None:
    evaluated = evaluate(GradeState.NEEDS_REVISION, iteration=1, of=3)
    assert evaluated.result is EvaluationResult.NEEDS_REVISION
    assert evaluated.next_iteration == 2


@pytest.mark.parametrize(("iteration", "of"), [(2, 3), (0, 1), (19, 20)])
def test_r40_needs_revision_at_the_last_iteration_is_max_iterations_reached(
    iteration: int, of: int
) -> None:
    evaluated = evaluate(GradeState.NEEDS_REVISION, iteration=iteration, of=of)
    assert evaluated.result is EvaluationResult.MAX_ITERATIONS_REACHED
    assert evaluated.next_iteration is None


@pytest.mark.parametrize(
    ("state", "code"),
    [
        (GradeState.FAILED, "grader_failed"),
        (GradeState.UNREADABLE, "unreadable_grade"),
        (GradeState.NOT_REPORTED, "no_grade"),
    ],
)
def test_r40_the_graders_failed_or_an_unreadable_or_missing_block_is_failed(
    state: GradeState, code: str
) -> None:
    evaluated = evaluate(state)
    assert evaluated.result is EvaluationResult.FAILED
    assert evaluated.cause is not None and evaluated.cause.code == code


def test_r40_the_graders_failed_names_its_explanation() -> None:
    cause = evaluate(GradeState.FAILED).cause
    assert cause is not None and cause.message == "the grader's result is failed: why"


TIMEOUT = SystemFailure(kind=FailureKind.TIMEOUT, code="deadline", message="pod deadline")
RATE_LIMIT = SystemFailure(kind=FailureKind.RATE_LIMIT, code="rate_limit", message="429")


@pytest.mark.parametrize(
    ("run", "code"),
    [
        (GraderRun(exit_code=1), "grader_exit_code_1"),
        (GraderRun(exit_code=None), "grader_no_exit"),
        (GraderRun(exit_code=None, system_failure=TIMEOUT), "deadline"),
        (GraderRun(exit_code=0, cli_error=RATE_LIMIT), "rate_limit"),
        (GraderRun(exit_code=0, stream_intact=False), "grader_stream_broken"),
    ],
)
def test_r40_a_grader_that_exits_non_zero_crashes_or_times_out_is_failed_whatever_it_said(
    run: GraderRun, code: str
) -> None:
    evaluated = evaluate(GradeState.SATISFIED, run)
    assert evaluated.result is EvaluationResult.FAILED
    assert evaluated.cause is not None and evaluated.cause.code == code


def test_r40_r44_an_interrupt_is_interrupted_whatever_the_grade_or_the_run() -> None:
    for state in GradeState:
        run = GraderRun(exit_code=None, interrupted=True)
        assert evaluate(state, run).result is EvaluationResult.INTERRUPTED


# -- R41 ---------------------------------------------------------------------


def end(evaluated: Evaluated, explanation: str | None = "two gaps remain") -> phase_end.LoopEnd:
    return phase_end.phase_end(
        evaluated,
        criteria=CRITERIA,
        explanation=explanation,
        agent_outcome=AGENT_OUTCOME,
        max_iterations=3,
        now=NOW,
    )


def test_r41_satisfied_completes_the_phase_with_the_agents_outcome() -> None:
    ended = end(Evaluated(0, EvaluationResult.SATISFIED))
    assert (ended.status, ended.failure_classification, ended.kept_as) == (
        PhaseStatus.COMPLETED,
        None,
        None,
    )
    assert ended.task_outcome == AGENT_OUTCOME


def test_r41_max_iterations_reached_is_outcome_not_met_with_a_blocker_per_unmet_criterion() -> None:
    ended = end(Evaluated(2, EvaluationResult.MAX_ITERATIONS_REACHED))
    assert ended.status is PhaseStatus.FAILED
    assert ended.failure_classification is FailureClassification.OUTCOME_NOT_MET
    assert ended.cause is None
    assert ended.kept_as == "failed_phase"
    outcome = ended.task_outcome
    assert outcome.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert outcome.source is TaskOutcomeSource.SYSTEM
    assert outcome.terminal_reason == "max_iterations"
    assert [(b.message, b.recoverable) for b in outcome.blockers] == [
        ("links: two links are dead", True),
        ("dates", True),
    ]
    assert outcome.summary == "The rubric was not met after 3 iterations. two gaps remain"


def test_r41_max_iterations_without_listed_criteria_still_says_why() -> None:
    ended = phase_end.phase_end(
        Evaluated(0, EvaluationResult.MAX_ITERATIONS_REACHED),
        criteria=[Criterion(name="a", met=True)],
        explanation="x" * 5000,
        agent_outcome=AGENT_OUTCOME,
        max_iterations=1,
        now=NOW,
    )
    [blocker] = ended.task_outcome.blockers
    assert blocker.type == "outcome_not_met"
    assert blocker.message.startswith("The rubric was not met after 1 iteration. x")
    assert len(blocker.message.encode()) == 1024
    assert len(ended.task_outcome.summary.encode()) == 4096


def test_r41_failed_fails_the_phase_platform_and_the_outcome_follows_the_cause() -> None:
    ended = end(evaluate(GradeState.NOT_REPORTED))
    assert (ended.status, ended.failure_classification) == (
        PhaseStatus.FAILED,
        FailureClassification.PLATFORM,
    )
    assert ended.kept_as == "failed_phase"
    assert ended.task_outcome.status is TaskOutcomeStatus.FAILED
    assert ended.task_outcome.terminal_reason == "no_grade"
    rate_limited = end(evaluate(GradeState.SATISFIED, GraderRun(exit_code=0, cli_error=RATE_LIMIT)))
    assert rate_limited.task_outcome.status is TaskOutcomeStatus.BLOCKED  # R36


def test_r41_r44_interrupted_interrupts_the_phase_and_keeps_the_work_as_partial() -> None:
    ended = end(evaluate(GradeState.SATISFIED, GraderRun(exit_code=None, interrupted=True)))
    assert (ended.status, ended.failure_classification, ended.kept_as) == (
        PhaseStatus.INTERRUPTED,
        None,
        "partial",
    )
    assert ended.cause is not None and ended.cause.code == "interrupted"


def test_r41_needs_revision_does_not_end_the_loop() -> None:
    with pytest.raises(ValueError, match="next iteration"):
        end(Evaluated(0, EvaluationResult.NEEDS_REVISION))


# -- R42 ---------------------------------------------------------------------


def test_r42_the_revision_section_holds_the_explanation_and_each_unmet_criterions_feedback() -> (
    None
):
    section = revision.revision_section(
        iteration=0, max_iterations=3, explanation="Two gaps.", criteria=CRITERIA
    )
    assert "Two gaps." in section
    assert "- links: two links are dead" in section
    assert "- dates\n" in section
    assert "coverage" not in section  # a met criterion is not feedback
    assert "/workspace/artifacts/previous/" in section
    assert "/workspace/artifacts/feedback/evaluation-0.json" in section
    assert section.startswith("## Revision: iteration 2 of at most 3\n")


def test_r42_multi_line_feedback_stays_under_its_criterion() -> None:
    criteria = [Criterion(name="tables", met=False, feedback="fix:\n- row 1\n- row 2\n")]
    section = revision.revision_section(
        iteration=1, max_iterations=3, explanation=None, criteria=criteria
    )
    assert "- tables: fix:\n  - row 1\n  - row 2\n" in section
    assert "(none given)" in section


def test_r42_the_evaluation_json_uses_the_grade_blocks_names() -> None:
    document = json.loads(
        revision.evaluation_document(
            iteration=1,
            result=EvaluationResult.NEEDS_REVISION,
            explanation="Two gaps.",
            criteria=CRITERIA,
        )
    )
    assert document == {
        "iteration": 1,
        "result": "needs_revision",
        "explanation": "Two gaps.",
        "criteria": [
            {"name": "coverage", "met": True, "feedback": None},
            {"name": "links", "met": False, "feedback": "two links are dead"},
            {"name": "dates", "met": False, "feedback": None},
        ],
    }
    assert revision.feedback_path(1) == "/workspace/artifacts/feedback/evaluation-1.json"


# -- R43 ---------------------------------------------------------------------


def finish(
    recorded: PhaseOutcome, iteration: int, result: EvaluationResult, spent: Usage | None = None
) -> PhaseOutcome:
    return record.finished(
        recorded,
        iteration=iteration,
        result=result,
        explanation="why",
        criteria=CRITERIA,
        spent=spent,
        now=NOW + timedelta(minutes=1),
    )


def test_r43_each_evaluation_is_recorded_as_it_starts_and_ends() -> None:
    first = record.started(None, iteration=0, grader_pod="x-0-a-g0", now=NOW)
    assert first.result is None
    assert [(e.iteration, e.result, e.grader_pod) for e in first.evaluations] == [
        (0, None, "x-0-a-g0")
    ]
    first = finish(first, 0, EvaluationResult.NEEDS_REVISION, Usage(input_tokens=10))
    second = record.started(first, iteration=1, grader_pod="x-0-a-g1", now=NOW)
    assert second.result is EvaluationResult.NEEDS_REVISION  # the latest finished result
    second = finish(second, 1, EvaluationResult.SATISFIED, Usage(input_tokens=5, output_tokens=1))
    assert second.result is EvaluationResult.SATISFIED
    assert [e.result for e in second.evaluations] == [
        EvaluationResult.NEEDS_REVISION,
        EvaluationResult.SATISFIED,
    ]
    assert second.usage == Usage(input_tokens=15, output_tokens=1)
    ended = second.evaluations[1]
    assert (ended.started_at, ended.finished_at) == (NOW, NOW + timedelta(minutes=1))
    assert ended.criteria == CRITERIA and ended.explanation == "why"


def test_r43_replaying_a_start_or_an_end_records_nothing_twice() -> None:
    started = record.started(None, iteration=0, grader_pod="g0", now=NOW)
    assert record.started(started, iteration=0, grader_pod="g0", now=NOW + timedelta(1)) == started
    ended = finish(started, 0, EvaluationResult.NEEDS_REVISION)
    assert finish(ended, 0, EvaluationResult.FAILED) == ended


def test_r45_an_iteration_is_counted_by_evaluations_not_by_attempts() -> None:
    """Attempt 2 failed and was retried, so attempt 3's grader grades iteration 1."""
    assert record.iteration_of(None, grader_pod="x-0-a-g1") == 0
    first = finish(record.started(None, iteration=0, grader_pod="x-0-a-g1", now=NOW), 0,
                   EvaluationResult.NEEDS_REVISION)  # fmt: skip
    assert record.iteration_of(first, grader_pod="x-0-a-g1") == 0  # graded again after a restart
    assert record.iteration_of(first, grader_pod="x-0-a-g3") == 1


def test_r45_a_retried_revised_attempt_gets_the_latest_evaluations_revision() -> None:
    graded = HandoffRef(manifest="s3://b/a/artifacts.json", sha256="0" * 64, count=1)
    recorded = finish(record.started(None, iteration=0, grader_pod="g1", now=NOW), 0,
                      EvaluationResult.NEEDS_REVISION)  # fmt: skip
    rebuilt = revision.recorded_revision(recorded, graded, max_iterations=3)
    assert rebuilt is not None and rebuilt.feedback_key == "evaluation-0.json"
    assert revision.recorded_revision(PhaseOutcome(), graded, max_iterations=3) is None
    ongoing = record.started(recorded, iteration=1, grader_pod="g3", now=NOW)
    again = revision.recorded_revision(ongoing, graded, max_iterations=3)
    assert again is None  # the latest evaluation, still running, asked for nothing yet


def test_r43_an_end_whose_start_was_lost_is_still_recorded() -> None:
    ended = finish(PhaseOutcome(), 0, EvaluationResult.FAILED)
    assert [(e.iteration, e.result, e.started_at) for e in ended.evaluations] == [
        (0, EvaluationResult.FAILED, None)
    ]


def test_r43_long_grader_texts_are_cut_in_status() -> None:
    criteria = [Criterion(name="n" * 2000, met=False, feedback="f" * 2000)] * 60
    recorded = record.finished(
        record.started(None, iteration=0, grader_pod="g0", now=NOW),
        iteration=0,
        result=EvaluationResult.NEEDS_REVISION,
        explanation="é" * 5000,
        criteria=criteria,
        spent=None,
        now=NOW,
    )
    [kept] = recorded.evaluations
    assert kept.explanation is not None and len(kept.explanation.encode()) <= 4096
    assert len(kept.criteria) == 50
    assert len(kept.criteria[0].name) == 1024
    assert kept.criteria[0].feedback == "f" * 1024


def test_r43_the_phase_usage_adds_the_graders_to_the_agents() -> None:
    graded = PhaseOutcome(usage=Usage(input_tokens=5, cost_usd=0.5))
    assert record.phase_usage(Usage(input_tokens=100), graded) == Usage(
        input_tokens=105, cost_usd=0.5
    )
    assert record.phase_usage(Usage(input_tokens=100), None) == Usage(input_tokens=100)
    assert record.phase_usage(None, None) is None


def test_r43_an_ongoing_event_is_due_every_30_seconds_while_the_grader_runs() -> None:
    assert not record.ongoing_due(NOW, None, now=NOW + timedelta(seconds=29))
    assert record.ongoing_due(NOW, None, now=NOW + timedelta(seconds=30))
    later = NOW + timedelta(seconds=30)
    assert not record.ongoing_due(NOW, later, now=later + timedelta(seconds=10))
    assert record.ongoing_due(NOW, later, now=later + timedelta(seconds=31))


def test_r43_event_messages_name_the_iteration_the_pod_and_the_result() -> None:
    recorded = record.started(None, iteration=1, grader_pod="x-0-a-g1", now=NOW)
    [running] = recorded.evaluations
    assert record.start_message(running, max_iterations=3) == (
        "iteration 1: evaluation started, grader pod x-0-a-g1 (at most 3 iterations)"
    )
    assert record.ongoing_message(running, now=NOW + timedelta(seconds=61)) == (
        "iteration 1: the grader has run 61s"
    )
    [ended] = finish(recorded, 1, EvaluationResult.NEEDS_REVISION).evaluations
    assert record.end_message(ended) == "iteration 1: needs_revision; not met: links, dates: why"
    assert (record.START_EVENT, record.ONGOING_EVENT, record.END_EVENT) == (
        "OutcomeEvaluationStart",
        "OutcomeEvaluationOngoing",
        "OutcomeEvaluationEnd",
    )


# -- R44 ---------------------------------------------------------------------


def test_r44_an_interrupt_ends_the_evaluation_under_way_and_the_outcome_interrupted() -> None:
    recorded = finish(
        record.started(None, iteration=0, grader_pod="g0", now=NOW),
        0,
        EvaluationResult.NEEDS_REVISION,
    )
    recorded = record.started(recorded, iteration=1, grader_pod="g1", now=NOW)
    stopped = record.interrupted(recorded, now=NOW + timedelta(minutes=5))
    assert stopped.result is EvaluationResult.INTERRUPTED
    assert [e.result for e in stopped.evaluations] == [
        EvaluationResult.NEEDS_REVISION,
        EvaluationResult.INTERRUPTED,
    ]
    assert stopped.evaluations[1].finished_at == NOW + timedelta(minutes=5)


def test_r44_an_interrupt_between_evaluations_keeps_every_finished_one() -> None:
    recorded = finish(
        record.started(None, iteration=0, grader_pod="g0", now=NOW),
        0,
        EvaluationResult.NEEDS_REVISION,
    )
    stopped = record.interrupted(recorded, now=NOW)
    assert stopped.result is EvaluationResult.INTERRUPTED
    assert stopped.evaluations == recorded.evaluations
