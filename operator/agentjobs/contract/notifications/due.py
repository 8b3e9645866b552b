"""R49, R51: which notifications an Execution owes, as a pure function of what the API holds.

One ``Finished`` per target once the Execution has ended; one
``PhaseFinished`` per target and ended phase. Each is a record in
``status.notifications[]`` keyed by (target index, event, phase); a key
already recorded is never added again, so reconciles settle, and a restarted
operator finds in the status what is still Pending and when to try it. A
target the allow-list refuses, or whose signing Secret is not the one the
operator may read, gets its records Failed at once, never called.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.notifications import delivery, message, signing, targets
from agentjobs.kube.status_patch import status_patch
from agentjobs.models.contract import ExecutionStatus, PhaseStatus
from agentjobs.models.notifications import NotificationRecord, NotifyEvent, NotifyTarget
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec

ENDED_PHASE = frozenset(
    {PhaseStatus.COMPLETED, PhaseStatus.FAILED, PhaseStatus.CANCELLED, PhaseStatus.INTERRUPTED}
)
Key = tuple[int, NotifyEvent, str | None]


@dataclass(frozen=True)
class PhaseEnd:
    """A phase of this Execution that has ended, with the status its event describes."""

    name: str
    resource_name: str
    status: PhaseResourceStatus


def phase_ends(children: Sequence[ChildPhase]) -> list[PhaseEnd]:
    """The ended phases among the Execution's own Phases, in phase order."""
    ended = [
        child
        for child in children
        if child.status.status in ENDED_PHASE and child.status.finished_at is not None
    ]
    return [
        PhaseEnd(name=child.spec.name, resource_name=child.resource_name, status=child.status)
        for child in sorted(ended, key=lambda child: child.spec.index)
    ]


def execution_ended(status: ExecutionResourceStatus) -> bool:
    return (
        status.status is not None
        and status.status is not ExecutionStatus.RUNNING
        and status.finished_at is not None
    )


def key(record: NotificationRecord) -> Key:
    return (record.notify, record.event, record.phase)


def shown_host(url: str) -> str:
    """What a record shows of a URL that could not be checked: its host at most."""
    try:
        return urlsplit(url).hostname or "(no host)"
    except ValueError:
        return "(unreadable url)"


def _ends(
    target: NotifyTarget,
    status: ExecutionResourceStatus,
    ends: Sequence[PhaseEnd],
    execution: message.ExecutionRef,
) -> list[tuple[NotifyEvent, str | None, str]]:
    owed: list[tuple[NotifyEvent, str | None, str]] = []
    if "PhaseFinished" in target.events:
        owed += [
            ("PhaseFinished", end.name, message.phase_event_id(execution, end.name)) for end in ends
        ]
    if "Finished" in target.events and execution_ended(status):
        owed.append(("Finished", None, message.execution_event_id(execution)))
    return owed


def notifications(
    spec: ExecutionSpec,
    status: ExecutionResourceStatus,
    ends: Sequence[PhaseEnd],
    *,
    execution: message.ExecutionRef,
    allowed: Sequence[targets.AllowPattern],
    secret_name: str | None,
) -> list[NotificationRecord]:
    """``status.notifications[]`` with a record for every end owed and not yet recorded;
    ``secret_name`` is the one signing Secret the operator may read (None: webhooks off)."""
    records = list(status.notifications)
    known = {key(record) for record in records}
    for index, target in enumerate(spec.notify):
        refusal: str | None = None
        try:
            shown = targets.check(target.url, allowed).authority
        except targets.TargetRefused as error:
            shown, refusal = shown_host(target.url), str(error)
        refusal = refusal or signing.secret_refusal(target.secret_ref.name, secret_name)
        for event, phase, event_id in _ends(target, status, ends, execution):
            if (index, event, phase) in known:
                continue
            record = NotificationRecord(
                notify=index, target=shown, event=event, phase=phase, id=event_id, state="Pending"
            )
            records.append(record if refusal is None else delivery.refused(record, refusal))
    return records


def ready(records: Sequence[NotificationRecord], *, now: datetime) -> list[NotificationRecord]:
    """The Pending records whose next attempt is due."""
    return [
        record
        for record in records
        if record.state == "Pending"
        and (record.next_attempt_at is None or record.next_attempt_at <= now)
    ]


def next_attempt(records: Sequence[NotificationRecord]) -> datetime | None:
    """When the earliest Pending record wants its next attempt (to requeue the reconcile)."""
    times = [
        record.next_attempt_at
        for record in records
        if record.state == "Pending" and record.next_attempt_at is not None
    ]
    return min(times, default=None)


def wake_at(records: Sequence[NotificationRecord], *, now: datetime) -> datetime | None:
    """When to reconcile again for these records: now if one is due, else its next attempt."""
    return now if ready(records, now=now) else next_attempt(records)


def attempt_now(status: ExecutionResourceStatus, previous: ExecutionResourceStatus) -> bool:
    """Whether a reconcile may make delivery attempts: only once the rest of the status is
    written, so that no receiver, however slow, delays a verdict."""
    unchanged = status.model_copy(update={"notifications": previous.notifications})
    return status_patch(unchanged, previous) is None


def replaced(
    records: Sequence[NotificationRecord], updated: NotificationRecord
) -> list[NotificationRecord]:
    """``records`` with the one of ``updated``'s key replaced by it."""
    return [updated if key(record) == key(updated) else record for record in records]


def message_for(
    record: NotificationRecord,
    spec: ExecutionSpec,
    status: ExecutionResourceStatus,
    ends: Sequence[PhaseEnd],
    *,
    execution: message.ExecutionRef,
) -> message.Message:
    """The event a record announces; the same bytes on every attempt."""
    include_outcome = spec.notify[record.notify].include_outcome
    if record.event == "Finished":
        return message.execution_finished(execution, status, include_outcome=include_outcome)
    end = next((end for end in ends if end.name == record.phase), None)
    if end is None:
        raise LookupError(f"phase {record.phase!r} of this notification is no longer listed")
    return message.phase_finished(
        execution,
        phase=end.name,
        resource_name=end.resource_name,
        status=end.status,
        include_outcome=include_outcome,
    )
