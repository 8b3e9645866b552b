"""Who may hold the leader-election Lease, and when (client-go's leaderelection rules).

Cases: a missing Lease is created by whoever asks, with no transitions; a Lease
held by another is refused until its record has been unchanged for the lease's
duration on the candidate's own clock, whatever its renewTime says; a renewed
record starts that time again; a Lease without a holder (released) is taken at
once; taking it counts a transition, renewing keeps its acquire time and count;
a released record has no holder and lasts one second; a holder leads until the
renew deadline after its last renewal began, which ends before any other may
take over; a spec reads back as the record written, times as MicroTime.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from agentjobs.kube import lease
from agentjobs.kube.lease import LeaseRecord, Observation

WALL = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
ME, OTHER = "operator-a_1234", "operator-b_5678"


def held(holder: str, *, since: float = 100.0, transitions: int = 3) -> Observation:
    record = LeaseRecord(
        holder=holder,
        duration_seconds=lease.LEASE_DURATION_SECONDS,
        acquired=WALL - timedelta(minutes=5),
        renewed=WALL - timedelta(seconds=1),
        transitions=transitions,
    )
    return Observation(record, since)


def test_a_missing_lease_is_created_by_whoever_asks() -> None:
    record = lease.claim(None, identity=ME, now=0.0, wall=WALL)
    assert record == LeaseRecord(
        holder=ME, duration_seconds=15, acquired=WALL, renewed=WALL, transitions=0
    )


@pytest.mark.parametrize("waited", [0.0, 1.0, 14.9])
def test_another_holders_lease_is_refused_until_it_has_gone_unchanged_for_its_duration(
    waited: float,
) -> None:
    assert lease.claim(held(OTHER), identity=ME, now=100.0 + waited, wall=WALL) is None


def test_a_lease_unchanged_for_its_duration_is_taken_with_one_more_transition() -> None:
    record = lease.claim(held(OTHER, transitions=3), identity=ME, now=115.0, wall=WALL)
    assert record == LeaseRecord(
        holder=ME, duration_seconds=15, acquired=WALL, renewed=WALL, transitions=4
    )


def test_expiry_counts_on_the_candidates_clock_not_from_the_renew_time() -> None:
    # A renewTime an hour old (a holder whose clock is behind) is still a live lease here.
    stale_looking = LeaseRecord(
        holder=OTHER, duration_seconds=15, renewed=WALL - timedelta(hours=1), transitions=1
    )
    seen = lease.observe(None, stale_looking, now=500.0)
    assert lease.claim(seen, identity=ME, now=501.0, wall=WALL) is None


def test_a_changed_record_starts_its_time_again_and_an_unchanged_one_keeps_it() -> None:
    first = held(OTHER, since=100.0)
    same = lease.observe(first, first.record, now=110.0)
    assert same.since == 100.0
    renewed = dataclasses.replace(first.record, renewed=WALL + timedelta(seconds=2))
    changed = lease.observe(first, renewed, now=110.0)
    assert changed.since == 110.0
    assert lease.claim(changed, identity=ME, now=116.0, wall=WALL) is None
    assert lease.claim(changed, identity=ME, now=125.0, wall=WALL) is not None


def test_a_released_lease_is_taken_at_once() -> None:
    released = lease.released(held(OTHER).record, wall=WALL)
    assert released.holder == "" and released.duration_seconds == 1
    seen = lease.observe(None, released, now=200.0)
    record = lease.claim(seen, identity=ME, now=200.0, wall=WALL)
    assert record is not None and record.holder == ME
    assert record.transitions == held(OTHER).record.transitions + 1


def test_renewing_keeps_the_acquire_time_and_the_transitions() -> None:
    mine = held(ME, transitions=7)
    record = lease.claim(mine, identity=ME, now=100.5, wall=WALL)
    assert record == LeaseRecord(
        holder=ME,
        duration_seconds=15,
        acquired=mine.record.acquired,
        renewed=WALL,
        transitions=7,
    )


@pytest.mark.parametrize(
    ("since_renewal", "leading"), [(0.0, True), (9.99, True), (10.0, False), (60.0, False)]
)
def test_a_holder_leads_until_the_renew_deadline_after_its_last_renewal(
    since_renewal: float, leading: bool
) -> None:
    assert lease.leading(1000.0, now=1000.0 + since_renewal) is leading


def test_holding_nothing_is_not_leading() -> None:
    assert lease.leading(None, now=0.0) is False


def test_a_lost_leader_stops_before_another_may_take_over() -> None:
    # The successor's clock starts no earlier than the leader's last renewal began.
    assert lease.RENEW_DEADLINE_SECONDS + lease.RETRY_PERIOD_SECONDS < lease.LEASE_DURATION_SECONDS
    renewal_began = 100.0
    seen = lease.observe(None, held(OTHER).record, now=renewal_began)
    last_leading = renewal_began + lease.RENEW_DEADLINE_SECONDS
    assert not lease.leading(renewal_began, now=last_leading)
    assert lease.claim(seen, identity=ME, now=last_leading, wall=WALL) is None


def test_a_spec_reads_back_as_the_record_written() -> None:
    record = held(OTHER).record
    spec = lease.spec(record)
    assert spec["renewTime"] == "2026-05-01T11:59:59.123456Z"
    assert spec["leaseDurationSeconds"] == 15
    assert lease.read(spec) == record


def test_an_empty_spec_reads_as_no_holder() -> None:
    assert lease.read({}) == LeaseRecord()
