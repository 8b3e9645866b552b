"""R36: the one ``TaskOutcome`` a phase or an execution ends with.

From a readable report that decided the phase, the agent is the source
(terminal reason ``finish_action``). Otherwise the system is, and the
outcome is derived from what ended the run: the recoverable kinds (auth,
quota, config, rate limit, transient, budget) give ``blocked``, others
``failed``; auth, config and budget problems need the user to change a setting.

The agent's own outcome (R36a): ``success: false`` is ``blocked`` for
``failure_reason: platform``, ``failed`` for ``task`` and ``refused`` and
``unknown`` otherwise; the report's ``blockers``, ``confidence`` and
``needs_user_action`` are the agent's, and never move the phase's status.

Decisions where the contract is silent: a completed phase whose agent
reported ``side_effects`` ``denied`` or ``failed`` is a ``partial_success``
(its deliverable exists but a write did not go through); a cancelled phase
is ``unknown`` (nobody can tell how it would have ended); a phase that
completed without a report is a system ``success``. A failure report with
no blockers of its own gets one ``agent_<reason>`` blocker, recoverable
only for ``platform``; the agent's own blockers come before a side effects
blocker.
"""

from __future__ import annotations

from datetime import datetime

from agentjobs.models.contract import (
    Blocker,
    FailureKind,
    FailureReason,
    PhaseStatus,
    Report,
    ReportState,
    SideEffects,
    SystemFailure,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)

BLOCKING_KINDS = frozenset(
    {
        FailureKind.AUTH,
        FailureKind.QUOTA,
        FailureKind.CONFIG,
        FailureKind.RATE_LIMIT,
        FailureKind.TRANSIENT,
        FailureKind.BUDGET,  # R70: more budget, and the run can go on
    }
)
USER_ACTION_KINDS = frozenset({FailureKind.AUTH, FailureKind.CONFIG, FailureKind.BUDGET})
AGENT_TERMINAL_REASON = "finish_action"
_AGENT_FAILURE_STATUS: dict[FailureReason | None, TaskOutcomeStatus] = {
    FailureReason.PLATFORM: TaskOutcomeStatus.BLOCKED,
    FailureReason.TASK: TaskOutcomeStatus.FAILED,
    FailureReason.REFUSED: TaskOutcomeStatus.FAILED,
}
_USER_ACTION_REASONS = (FailureReason.TASK, FailureReason.REFUSED)


def writes_incomplete(side_effects: SideEffects | None) -> bool:
    """R36: an external write denied or failed makes a reported success partial."""
    return side_effects in (SideEffects.DENIED, SideEffects.FAILED)


def from_failure(failure: SystemFailure, *, now: datetime) -> TaskOutcome:
    """The system's outcome for a run that ended because of ``failure``."""
    blocked = failure.kind in BLOCKING_KINDS
    return TaskOutcome(
        status=TaskOutcomeStatus.BLOCKED if blocked else TaskOutcomeStatus.FAILED,
        source=TaskOutcomeSource.SYSTEM,
        summary=failure.message,
        blockers=[Blocker(type=failure.kind.value, message=failure.message, recoverable=blocked)],
        needs_user_action=failure.kind in USER_ACTION_KINDS,
        terminal_reason=failure.code,
        reported_at=now,
    )


def from_report(report: Report, *, now: datetime) -> TaskOutcome:
    """The agent's outcome, from a readable report that decided its phase."""
    if report.state is ReportState.SUCCESS:
        partial = writes_incomplete(report.side_effects)
        summary = report.comments or "The agent reported success."
        blockers = list(report.blockers or [])
        if partial:
            message = f"an external write {report.side_effects}: {summary}"
            blockers.append(Blocker(type="side_effects", message=message, recoverable=True))
        return TaskOutcome(
            status=TaskOutcomeStatus.PARTIAL_SUCCESS if partial else TaskOutcomeStatus.SUCCESS,
            source=TaskOutcomeSource.AGENT,
            summary=summary,
            blockers=blockers,
            needs_user_action=bool(report.needs_user_action),
            confidence=report.confidence,
            terminal_reason=AGENT_TERMINAL_REASON,
            reported_at=now,
        )
    failure_reason = report.failure_reason
    reason = failure_reason.value if failure_reason else "unspecified"
    summary = report.comments or f"The agent reported failure ({reason})."
    own_blocker = Blocker(
        type=f"agent_{reason}",
        message=summary,
        recoverable=failure_reason is FailureReason.PLATFORM,
    )
    needs_user_action = report.needs_user_action
    if needs_user_action is None:
        needs_user_action = failure_reason in _USER_ACTION_REASONS
    return TaskOutcome(
        status=_AGENT_FAILURE_STATUS.get(failure_reason, TaskOutcomeStatus.UNKNOWN),
        source=TaskOutcomeSource.AGENT,
        summary=summary,
        blockers=report.blockers or [own_blocker],
        needs_user_action=needs_user_action,
        confidence=report.confidence,
        terminal_reason=AGENT_TERMINAL_REASON,
        reported_at=now,
    )


def cancelled(summary: str, *, now: datetime) -> TaskOutcome:
    """Cancelled: nobody can tell how the work would have ended."""
    return TaskOutcome(
        status=TaskOutcomeStatus.UNKNOWN,
        source=TaskOutcomeSource.SYSTEM,
        summary=summary,
        terminal_reason="cancelled",
        reported_at=now,
    )


def for_phase(
    *, status: PhaseStatus, report: Report, cause: SystemFailure | None, now: datetime
) -> TaskOutcome:
    """R36 for a phase that has ended."""
    if status is PhaseStatus.CANCELLED:
        return cancelled("The phase was cancelled before it finished.", now=now)
    if cause is not None:
        return from_failure(cause, now=now)
    if report.state in (ReportState.SUCCESS, ReportState.FAILURE):
        return from_report(report, now=now)
    return TaskOutcome(
        status=TaskOutcomeStatus.SUCCESS,
        source=TaskOutcomeSource.SYSTEM,
        summary="The agent exited cleanly without a report; its output met the artifact rule.",
        terminal_reason="completed_without_report",
        reported_at=now,
    )
