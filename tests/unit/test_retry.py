"""R45-R47: which concluded attempts are retried, when, and what the phase says meanwhile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from agentjobs.contract import retry
from agentjobs.contract.phase import phase_status
from agentjobs.models.contract import (
    FailureClassification,
    PhaseStatus,
    Report,
    ReportState,
    SideEffects,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
    Usage,
)
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import ArtifactStatus, PhaseResourceStatus
from agentjobs.models.resources import PhaseSettings
from agentjobs.models.retry import AttemptRecord, RetryOn, RetryPolicy

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
POLICY = RetryPolicy(limit=2)


def concluded(
    status: PhaseStatus = PhaseStatus.FAILED,
    classification: FailureClassification | None = FailureClassification.PLATFORM,
    *,
    outcome: TaskOutcomeStatus = TaskOutcomeStatus.FAILED,
    side_effects: SideEffects | None = None,
) -> PhaseResourceStatus:
    return PhaseResourceStatus(
        status=status,
        failure_classification=classification,
        exit_code=1,
        report=Report(state=ReportState.NOT_REPORTED, side_effects=side_effects),
        task_outcome=TaskOutcome(
            status=outcome,
            source=TaskOutcomeSource.SYSTEM,
            summary="The agent exited 1.",
            terminal_reason="crash",
            reported_at=NOW,
        ),
        artifacts=[
            ArtifactStatus(path="kept.txt", title="kept.txt (kept from a failed phase)", size=1)
        ],
        usage=Usage(input_tokens=10),
        finished_at=NOW,
    )


def failed_record(number: int, finished_at: datetime = NOW) -> AttemptRecord:
    return AttemptRecord(
        number=number, status=PhaseStatus.FAILED, pod_name=f"p-a{number}", finished_at=finished_at
    )


def decide(status: PhaseResourceStatus, *, attempt: int = 1, policy: RetryPolicy = POLICY,
           records: list[AttemptRecord] | None = None,
           interrupt_requested: bool = False) -> retry.RetryDecision:  # fmt: skip
    return retry.decide(
        policy,
        status,
        attempt=attempt,
        records=records or [],
        interrupt_requested=interrupt_requested,
    )


def test_a_platform_failure_is_retried_after_the_backoff() -> None:
    decision = decide(concluded())
    assert decision.retry and decision.backoff_seconds == 10
    assert decision.reason == "platform: retried as attempt 2 after 10 s (retry 1 of 2)"


def test_the_backoff_doubles_per_retry_up_to_600_seconds() -> None:
    assert decide(concluded(), attempt=2, records=[failed_record(1)]).backoff_seconds == 20
    slow = RetryPolicy(limit=10, backoff_seconds=500)
    records = [failed_record(n) for n in range(1, 4)]
    assert decide(concluded(), attempt=4, policy=slow, records=records).backoff_seconds == 600


def test_retries_stop_when_the_limit_is_used() -> None:
    decision = decide(concluded(), attempt=3, records=[failed_record(1), failed_record(2)])
    assert not decision.retry
    assert decision.reason == "not retried: all 2 retries of retry.limit are used"


def test_an_outcomes_revisions_are_not_counted_as_retries() -> None:
    graded = AttemptRecord(number=1, status=PhaseStatus.COMPLETED, pod_name="p-a1", finished_at=NOW)
    decision = decide(concluded(), attempt=3, records=[graded, failed_record(2)])
    assert decision.retry and decision.reason is not None and "retry 2 of 2" in decision.reason


@pytest.mark.parametrize(
    ("classification", "why"),
    [
        (FailureClassification.CORRECT_REFUSAL, "refused"),
        (FailureClassification.UNCLASSIFIED, "unclassified"),
        (FailureClassification.OUTCOME_NOT_MET, "outcome not met"),
    ],
)
def test_what_the_agent_or_grader_decided_is_never_retried(
    classification: FailureClassification, why: str
) -> None:
    decision = decide(concluded(classification=classification), policy=RetryPolicy(limit=10))
    assert not decision.retry and decision.reason is not None and why in decision.reason


def test_completed_cancelled_and_no_policy_say_nothing() -> None:
    assert decide(concluded(PhaseStatus.COMPLETED, None)) == retry.RetryDecision(False, None)
    assert decide(concluded(PhaseStatus.CANCELLED, None)) == retry.RetryDecision(False, None)
    assert decide(concluded(), policy=retry.NO_RETRY) == retry.RetryDecision(False, None)


@pytest.mark.parametrize("side_effects", [SideEffects.SUCCEEDED, SideEffects.DENIED,
                                          SideEffects.FAILED])  # fmt: skip
def test_reported_external_writes_stop_a_retry_and_say_why(side_effects: SideEffects) -> None:
    decision = decide(concluded(side_effects=side_effects))
    assert not decision.retry and decision.reason is not None
    assert f"side_effects {side_effects.value}" in decision.reason
    assert "retry.evenAfterSideEffects" in decision.reason
    anyway = RetryPolicy(limit=2, even_after_side_effects=True)
    assert decide(concluded(side_effects=side_effects), policy=anyway).retry


def test_no_external_writes_do_not_stop_a_retry() -> None:
    assert decide(concluded(side_effects=SideEffects.NONE)).retry


def test_blocked_and_platform_are_told_apart() -> None:
    blocked = concluded(outcome=TaskOutcomeStatus.BLOCKED)
    assert retry.retry_class(blocked, interrupt_requested=False) is RetryOn.BLOCKED
    assert retry.retry_class(concluded(), interrupt_requested=False) is RetryOn.PLATFORM
    only_blocked = RetryPolicy(limit=1, on=[RetryOn.BLOCKED])
    assert decide(blocked, policy=only_blocked).retry
    refused = decide(concluded(), policy=only_blocked)
    assert not refused.retry
    assert refused.reason == "not retried: it ended platform, and retry.on lists blocked"


def test_an_interruption_is_retried_only_when_listed_and_not_asked_for() -> None:
    interrupted = concluded(PhaseStatus.INTERRUPTED, None)
    assert not decide(interrupted).retry  # the default lists platform and blocked
    listed = RetryPolicy(limit=1, on=[RetryOn.INTERRUPTED])
    assert decide(interrupted, policy=listed).retry
    asked = decide(interrupted, policy=listed, interrupt_requested=True)
    assert not asked.retry and asked.reason == "not retried: the interrupt was asked for"


def test_the_retrying_status_links_nothing_of_the_attempt_and_keeps_its_record() -> None:
    before = PhaseResourceStatus(
        status=PhaseStatus.RUNNING, attempt=1, pod_name="p-a1", usage=Usage(input_tokens=5)
    )
    ended = concluded()
    decision = decide(ended)
    record = retry.attempt_record(ended, number=1, pod_name="p-a1", reason=decision.reason, now=NOW)
    status = phase_status.retrying(before, ended, record=record, generation=1, now=NOW)
    assert status.status is PhaseStatus.RUNNING and status.attempt == 2
    assert status.pod_name is None and status.run is None and status.artifacts == []
    assert status.failure_classification is None and status.exit_code is None
    assert status.usage == Usage(input_tokens=15)
    assert status.attempts == [record] and record.exit_code == 1
    assert record.failure_classification is FailureClassification.PLATFORM
    running = next(c for c in status.conditions if c.type == "Running")
    assert running.message == f"attempt 1 ended {decision.reason}"
    assert status.repositories is None


def test_the_retrying_status_keeps_where_the_attempt_left_each_repository() -> None:
    before = PhaseResourceStatus(status=PhaseStatus.RUNNING, attempt=1, pod_name="p-a1")
    left = RepositoryStatus(name="service", url="https://g/s.git", head_commit="b" * 40)
    ended = concluded().model_copy(update={"repositories": [left]})
    record = retry.attempt_record(ended, number=1, pod_name="p-a1", reason="retried", now=NOW)
    status = phase_status.retrying(before, ended, record=record, generation=1, now=NOW)
    assert status.repositories == [left]


def test_a_record_written_again_stays_one() -> None:
    first = failed_record(1)
    again = first.model_copy(update={"reason": "again"})
    assert retry.with_attempt([first, failed_record(2)], again) == [again, failed_record(2)]


def test_an_attempt_record_without_a_reason_gives_the_outcomes_summary() -> None:
    record = retry.attempt_record(concluded(), number=1, pod_name="p-a1", reason=None, now=NOW)
    assert record.reason == "The agent exited 1."


def test_a_retried_attempt_is_due_after_its_predecessors_end_plus_the_backoff() -> None:
    records = [failed_record(1)]
    assert retry.due_at(records, POLICY, attempt=2) == NOW + timedelta(seconds=10)
    records.append(failed_record(2, NOW + timedelta(seconds=30)))
    assert retry.due_at(records, POLICY, attempt=3) == NOW + timedelta(seconds=50)
    assert retry.due_at(records, POLICY, attempt=1) is None
    revised = [AttemptRecord(number=1, status=PhaseStatus.COMPLETED, pod_name="p-a1",
                             finished_at=NOW)]  # fmt: skip
    assert retry.due_at(revised, POLICY, attempt=2) is None


@pytest.mark.parametrize(
    "retry_spec",
    [{"limit": 11}, {"limit": -1}, {"backoffSeconds": 601}, {"on": ["refused"]}, {"tries": 1}],
)
def test_a_malformed_policy_is_refused(retry_spec: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        PhaseSettings.model_validate({"retry": retry_spec})


def test_the_policy_defaults_are_the_contracts() -> None:
    policy = PhaseSettings.model_validate({"retry": {}}).retry
    assert policy == RetryPolicy(
        limit=0, on=[RetryOn.PLATFORM, RetryOn.BLOCKED], backoff_seconds=10,
        even_after_side_effects=False,
    )  # fmt: skip
