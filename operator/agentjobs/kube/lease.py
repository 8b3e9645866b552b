"""Leader election by a coordination.k8s.io/v1 Lease: who may hold it, and when.

The rules of client-go's leaderelection: a candidate takes the Lease when it
has no holder, or when its record has not changed for the lease's duration
as measured on the candidate's own clock, from when it first saw that
record (never from the record's ``renewTime``: two machines' clocks need not
agree). The holder renews every retry period and counts itself the leader
only until the renew deadline after the start of its last successful
renewal, which ends well before any other candidate may take over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

# client-go's defaults for controllers: a lost leader stops at least 5 s before a successor
# may start (15 - 10), and a failed renewal is retried four times before it gives up.
LEASE_DURATION_SECONDS = 15
RENEW_DEADLINE_SECONDS = 10.0
RETRY_PERIOD_SECONDS = 2.0


@dataclass(frozen=True)
class LeaseRecord:
    """A Lease's spec: who holds it, for how long, since when, after how many changes."""

    holder: str = ""
    duration_seconds: int = 0
    acquired: datetime | None = None
    renewed: datetime | None = None
    transitions: int = 0


@dataclass(frozen=True)
class Observation:
    """A record as last read, and the local monotonic time when it was first seen."""

    record: LeaseRecord
    since: float


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def _micro_time(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def read(spec: Mapping[str, Any]) -> LeaseRecord:
    """The record in a Lease's ``spec`` (missing fields read as empty)."""
    return LeaseRecord(
        holder=str(spec.get("holderIdentity") or ""),
        duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquired=_time(spec.get("acquireTime")),
        renewed=_time(spec.get("renewTime")),
        transitions=int(spec.get("leaseTransitions") or 0),
    )


def spec(record: LeaseRecord) -> dict[str, Any]:
    """A Lease's ``spec`` holding ``record``, times as the API's MicroTime."""
    return {
        "holderIdentity": record.holder,
        "leaseDurationSeconds": record.duration_seconds,
        "acquireTime": _micro_time(record.acquired),
        "renewTime": _micro_time(record.renewed),
        "leaseTransitions": record.transitions,
    }


def observe(previous: Observation | None, record: LeaseRecord, *, now: float) -> Observation:
    """What is known after reading ``record``: an unchanged record keeps the time it was first
    seen, so a holder that stopped renewing expires; a changed one starts its time again."""
    if previous is not None and previous.record == record:
        return previous
    return Observation(record, now)


def held_by_another(observation: Observation, *, identity: str, now: float) -> bool:
    """Another candidate holds the Lease and its record has not yet gone stale here."""
    record = observation.record
    return (
        bool(record.holder)
        and record.holder != identity
        and now < observation.since + record.duration_seconds
    )


def claim(
    observation: Observation | None, *, identity: str, now: float, wall: datetime
) -> LeaseRecord | None:
    """The record to write to take or keep the Lease (``observation`` None: there is no Lease
    yet), or None when another candidate still holds it. ``now`` is the monotonic clock of
    :func:`observe`, ``wall`` the time written into the record."""
    fresh = LeaseRecord(
        holder=identity, duration_seconds=LEASE_DURATION_SECONDS, acquired=wall, renewed=wall
    )
    if observation is None:
        return fresh
    if held_by_another(observation, identity=identity, now=now):
        return None
    current = observation.record
    if current.holder == identity:
        return replace(current, duration_seconds=LEASE_DURATION_SECONDS, renewed=wall)
    return replace(fresh, transitions=current.transitions + 1)


def released(record: LeaseRecord, *, wall: datetime) -> LeaseRecord:
    """The record a leader writes when it steps down, so a successor need not wait for it to
    expire: no holder, and a duration of one second."""
    return LeaseRecord(
        duration_seconds=1, acquired=wall, renewed=wall, transitions=record.transitions
    )


def leading(renewed_at: float | None, *, now: float) -> bool:
    """A holder is the leader until the renew deadline after the start of its last
    successful renewal (``renewed_at``, monotonic; None: it holds nothing)."""
    return renewed_at is not None and now - renewed_at < RENEW_DEADLINE_SECONDS
