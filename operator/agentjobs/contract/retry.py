"""R45-R47: whether a concluded attempt is followed by another, and when.

An attempt is retried only when its end is a class the policy lists, attempts
remain, and its agent did not report external writes (R46). Never retried:
a correct refusal, an unclassified failure, an unmet outcome (the agent or
the grader decided), a cancel or an interrupt the user asked for (the user
decided). A retried attempt links nothing to the execution (R34, R47): the
phase goes on as it stood before the attempt, with the attempt recorded.

Decisions where the contract is silent: ``platform`` is a failure classified
platform whose outcome is not ``blocked``, and ``blocked`` one whose outcome
is (a rate limit, a transient fault, a credential), so a policy can retry
one and not the other; retries are counted as the failed or interrupted
attempts already recorded (an outcome's revisions are attempts too, and not
retries); each attempt is recorded even without a policy, so
``status.attempts[]`` always tells the whole run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentjobs.contract.limits import guard
from agentjobs.models.contract import (
    FailureClassification,
    PhaseStatus,
    SideEffects,
    TaskOutcomeStatus,
)
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.retry import (
    MAX_BACKOFF_SECONDS,
    AttemptRecord,
    RetryOn,
    RetryPolicy,
    TranscriptRef,
)

NO_RETRY = RetryPolicy()
_WRITES_ATTEMPTED = frozenset({SideEffects.SUCCEEDED, SideEffects.DENIED, SideEffects.FAILED})
_DECIDED_BY_AGENT = {
    FailureClassification.CORRECT_REFUSAL: "the agent refused the task (correct_refusal)",
    FailureClassification.UNCLASSIFIED: "the agent reported a failure of unknown cause "
    "(unclassified)",
    FailureClassification.OUTCOME_NOT_MET: "the grader found the outcome not met",
}


@dataclass(frozen=True)
class RetryDecision:
    """What follows a concluded attempt: ``retry`` after ``backoff_seconds``, and why."""

    retry: bool
    reason: str | None
    backoff_seconds: int = 0


def retry_class(concluded: PhaseResourceStatus, *, interrupt_requested: bool) -> RetryOn | None:
    """The class of an attempt's end a policy may retry, or None when none may (R45).

    R70: an attempt a spend limit or its turns stopped is never retried (another would
    pass them too); one stopped as stuck is of its own class."""
    if concluded.status is PhaseStatus.INTERRUPTED:
        return None if interrupt_requested else RetryOn.INTERRUPTED
    if (
        concluded.status is not PhaseStatus.FAILED
        or concluded.failure_classification is not FailureClassification.PLATFORM
    ):
        return None
    outcome = concluded.task_outcome
    stop = guard.stopped_by(outcome.terminal_reason if outcome else None)
    if stop is not None:
        return RetryOn.STUCK if stop is guard.Limit.IDLE else None
    blocked = outcome is not None and outcome.status is TaskOutcomeStatus.BLOCKED
    return RetryOn.BLOCKED if blocked else RetryOn.PLATFORM


def retries_used(records: Sequence[AttemptRecord], *, before: int) -> int:
    """How many attempts before attempt ``before`` were retried: each failed or interrupted
    one, since such an attempt ends the phase unless it is retried."""
    ended = (PhaseStatus.FAILED, PhaseStatus.INTERRUPTED)
    return sum(1 for r in records if r.number < before and r.status in ended)


def backoff_seconds(policy: RetryPolicy, retry: int) -> int:
    """The wait before retry ``retry`` (1-based): doubled for each, at most 600 s."""
    return min(policy.backoff_seconds << (retry - 1), MAX_BACKOFF_SECONDS)


def decide(
    policy: RetryPolicy,
    concluded: PhaseResourceStatus,
    *,
    attempt: int,
    records: Sequence[AttemptRecord],
    interrupt_requested: bool,
) -> RetryDecision:
    """Whether attempt ``attempt``, concluded as ``concluded``, is retried (R45, R46)."""
    status = concluded.status
    if status is PhaseStatus.COMPLETED or status is PhaseStatus.CANCELLED or policy.limit == 0:
        return RetryDecision(retry=False, reason=None)
    if status is PhaseStatus.FAILED and concluded.failure_classification in _DECIDED_BY_AGENT:
        why = _DECIDED_BY_AGENT[concluded.failure_classification]
        return RetryDecision(retry=False, reason=f"not retried: {why}")
    found = retry_class(concluded, interrupt_requested=interrupt_requested)
    if found is None:
        return RetryDecision(retry=False, reason="not retried: the interrupt was asked for")
    if found not in policy.on:
        listed = ", ".join(item.value for item in policy.on) or "nothing"
        return RetryDecision(
            retry=False, reason=f"not retried: it ended {found.value}, and retry.on lists {listed}"
        )
    side_effects = concluded.report.side_effects if concluded.report else None
    if side_effects in _WRITES_ATTEMPTED and not policy.even_after_side_effects:
        assert side_effects is not None
        return RetryDecision(
            retry=False,
            reason=(
                f"not retried: the agent reported side_effects {side_effects.value}, so it "
                "attempted external writes that another attempt could repeat; set "
                "retry.evenAfterSideEffects to retry anyway"
            ),
        )
    used = retries_used(records, before=attempt)
    if used >= policy.limit:
        return RetryDecision(
            retry=False, reason=f"not retried: all {policy.limit} retries of retry.limit are used"
        )
    wait = backoff_seconds(policy, used + 1)
    return RetryDecision(
        retry=True,
        reason=f"{found.value}: retried as attempt {attempt + 1} after {wait} s "
        f"(retry {used + 1} of {policy.limit})",
        backoff_seconds=wait,
    )


def attempt_record(
    concluded: PhaseResourceStatus,
    *,
    number: int,
    pod_name: str,
    reason: str | None,
    now: datetime,
    transcript: TranscriptRef | None = None,
) -> AttemptRecord:
    """Attempt ``number`` as it concluded; ``reason`` says what follows it, or the outcome's
    summary when nothing needs saying."""
    summary = concluded.error or (
        concluded.task_outcome.summary if concluded.task_outcome else None
    )
    return AttemptRecord(
        number=number,
        status=concluded.status or PhaseStatus.FAILED,
        failure_classification=concluded.failure_classification,
        exit_code=concluded.exit_code,
        pod_name=pod_name,
        reason=reason or summary,
        finished_at=concluded.finished_at or now,
        transcript=transcript,
    )


def with_attempt(records: Sequence[AttemptRecord], record: AttemptRecord) -> list[AttemptRecord]:
    """``records`` with ``record`` in its place: written again after a restart, it stays one."""
    kept = [r for r in records if r.number != record.number]
    return sorted([*kept, record], key=lambda r: r.number)


def due_at(
    records: Sequence[AttemptRecord], policy: RetryPolicy, *, attempt: int
) -> datetime | None:
    """When retried attempt ``attempt`` may start: its predecessor's end plus the backoff."""
    previous = next((r for r in records if r.number == attempt - 1), None)
    if previous is None or previous.status not in (PhaseStatus.FAILED, PhaseStatus.INTERRUPTED):
        return None
    used = retries_used(records, before=attempt)
    return previous.finished_at + timedelta(seconds=backoff_seconds(policy, used))
