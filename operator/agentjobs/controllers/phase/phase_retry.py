"""Retries (R45-R47) as a phase's runner drives them.

After an agent attempt concludes, :func:`after_attempt` records it in
``status.attempts[]`` and asks :mod:`agentjobs.contract.retry` whether another
follows. A retried attempt is written in one status write with the next
attempt's number, its run record and log progress cleared, so a restarted
operator starts that attempt (pod ``-a<n+1>``, storage ``attempt-<n+1>``)
once its backoff has passed, counted from the recorded end: a restart never
shortens it and never retries an attempt twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from agentjobs.adapters import metrics
from agentjobs.contract import retry
from agentjobs.contract.artifacts import object_layout
from agentjobs.contract.phase import phase_core, phase_status
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.retry import TranscriptRef
from agentjobs.models.storage import ObjectLocation
from agentjobs.runtime import events

RETRYING_EVENT = "Retrying"
NOT_RETRIED_EVENT = "NotRetried"


@dataclass(frozen=True)
class AttemptEnd:
    """The concluded attempt's status, recorded, and whether another attempt follows."""

    status: PhaseResourceStatus
    retried: bool


async def after_attempt(
    ctx: PhaseContext, attempt: Attempt, concluded: PhaseResourceStatus
) -> AttemptEnd | None:
    """Record ``attempt`` and retry it if its policy says so; None when the Phase is gone."""
    policy = ctx.spec.retry or retry.NO_RETRY
    decision = retry.decide(
        policy,
        concluded,
        attempt=attempt.number,
        records=ctx.status.attempts,
        interrupt_requested=phase_core.retry_withheld(ctx.stops),
    )
    now = datetime.now(UTC)
    metrics.reports.labels(concluded.report.state if concluded.report else "not_reported").inc()
    record = retry.attempt_record(
        concluded,
        number=attempt.number,
        pod_name=attempt.pod_name,
        reason=decision.reason,
        now=now,
        transcript=_transcript(ctx, attempt),
    )
    if not decision.retry:
        if decision.reason is not None:
            events.post(
                ctx.body, reason=NOT_RETRIED_EVENT, message=record.reason or "", warning=True
            )
        return AttemptEnd(phase_status.not_retried(concluded, record), retried=False)
    status = phase_status.retrying(
        ctx.status, concluded, record=record, generation=ctx.generation, now=now
    )
    if not await ctx.write_status(status):
        return None
    metrics.attempts_retried.inc()
    events.post(
        ctx.body,
        reason=RETRYING_EVENT,
        message=f"attempt {attempt.number} ({attempt.pod_name}) ended {decision.reason}",
        warning=True,
    )
    return AttemptEnd(status, retried=True)


def _transcript(ctx: PhaseContext, attempt: Attempt) -> TranscriptRef | None:
    """Where the attempt's log was stored (before its run was checkpointed), if it was."""
    run = ctx.status.run
    if ctx.storage is None or attempt.bucket is None or attempt.root is None or run is None:
        return None
    if not run.transcript_sha256:  # the agent never ran: nothing was read, nothing stored
        return None
    location = ObjectLocation(attempt.bucket, object_layout.transcript_key(attempt.root))
    return TranscriptRef(
        url=location.url,
        sha256=run.transcript_sha256,
        size=run.transcript_bytes,
        truncated=run.transcript_truncated,
    )


async def wait_for_backoff(ctx: PhaseContext, attempt: Attempt) -> None:
    """Until a retried attempt's backoff has passed, or the phase is told to stop."""
    policy = ctx.spec.retry or retry.NO_RETRY
    due = retry.due_at(ctx.status.attempts, policy, attempt=attempt.number)
    while due is not None and not ctx.stops.requested:
        remaining = (due - datetime.now(UTC)).total_seconds()
        if remaining <= 0:
            return
        await ctx.wait(remaining)
