"""Cron schedules read as the CronJob controller reads them (issue 28).

Cases: fields, names, ranges, steps, lists and macros; each malformed
schedule or unknown time zone refused with a message naming the field; a
day matches either day field when both are restricted, both when one is
``*``; the next time after any moment is the first matching minute after it
(checked minute by minute); across daylight-saving changes in New York and
Berlin a skipped time does not run that day, a repeated one runs at both
instants, an hourly schedule never runs twice in one instant; the times
before a moment come latest first.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentjobs.contract.scheduling import cron

T0 = datetime(2026, 12, 5, 10, 7, tzinfo=UTC)  # a Saturday


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def test_fields_names_ranges_steps_lists_and_macros() -> None:
    schedule = cron.parse("*/15 9-17 1,15 JAN-mar mon-FRI")
    assert schedule.minutes == {0, 15, 30, 45}
    assert schedule.hours == set(range(9, 18))
    assert schedule.days == {1, 15} and schedule.months == {1, 2, 3}
    assert schedule.weekdays == {1, 2, 3, 4, 5}
    assert cron.parse("5/20 * * * *").minutes == {5, 25, 45}
    assert cron.parse("@hourly") == cron.parse("0 * * * *")
    assert cron.parse("@weekly").weekdays == {0}
    assert cron.parse("0 0 ? * *").any_day


@pytest.mark.parametrize(
    ("schedule", "zone", "message"),
    [
        ("* * * *", None, "a schedule has 5 fields"),
        ("60 * * * *", None, "minute '60': 60 is outside 0-59"),
        ("* 5-3 * * *", None, "hour '5-3': the range runs backwards"),
        ("*/0 * * * *", None, "the step must be a positive number"),
        ("* * * * 7", None, "day of week '7': 7 is outside 0-6"),
        ("? * * * *", None, "'?' is only for the day fields"),
        ("* * * smarch *", None, "'smarch' is not a number or a name"),
        ("@fortnightly", None, "unknown macro '@fortnightly'"),
        ("@every 1h", None, "@every is not a cron schedule"),
        ("TZ=UTC * * * * *", None, "give the time zone in timeZone"),
        ("* * * * *", "Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
    ],
)
def test_a_malformed_schedule_is_refused_saying_why(
    schedule: str, zone: str | None, message: str
) -> None:
    with pytest.raises(cron.ScheduleError, match=message.replace("?", r"\?").replace("*", r"\*")):
        cron.parse(schedule, zone)


def test_both_day_fields_restricted_match_either_and_a_star_makes_both_needed() -> None:
    either = cron.parse("0 0 13 * 5")  # the 13th, or a Friday
    assert cron.next_time(either, T0) == at("2026-12-11T00:00:00+00:00")  # Friday the 11th
    both = cron.parse("0 0 * * 5")
    assert cron.next_time(both, T0) == at("2026-12-11T00:00:00+00:00")
    month_day = cron.parse("0 0 13 * *")
    assert cron.next_time(month_day, T0) == at("2026-12-13T00:00:00+00:00")


def matches(schedule: cron.Schedule, instant: datetime) -> bool:
    local = instant.astimezone(schedule.zone)
    return (
        local.minute in schedule.minutes
        and local.hour in schedule.hours
        and local.month in schedule.months
        and schedule.day_matches(local.date())
    )


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.integers(0, 59), min_size=1, max_size=3),
    st.sets(st.integers(0, 23), min_size=1, max_size=4),
    st.sampled_from(["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata"]),
    st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2027, 1, 1)),
)
def test_the_next_time_is_the_first_matching_minute_after_the_moment(
    minutes: set[int], hours: set[int], zone: str, naive: datetime
) -> None:
    schedule = cron.parse(f"{','.join(map(str, minutes))} {','.join(map(str, hours))} * * *", zone)
    moment = naive.replace(tzinfo=UTC)
    found = cron.next_time(schedule, moment)
    assert found is not None and found > moment and matches(schedule, found)
    minute = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while minute < found:
        assert not matches(schedule, minute), minute
        minute += timedelta(minutes=1)


def test_a_time_spring_forward_skips_does_not_run_that_day() -> None:
    schedule = cron.parse("30 2 * * *", "America/New_York")
    before = at("2026-03-08T00:00:00-05:00")
    assert cron.next_time(schedule, before) == at("2026-03-09T02:30:00-04:00")


def test_a_time_fall_back_repeats_runs_at_both_instants() -> None:
    schedule = cron.parse("30 1 * * *", "America/New_York")
    first = cron.next_time(schedule, at("2026-11-01T00:00:00-04:00"))
    assert first == at("2026-11-01T01:30:00-04:00")
    assert cron.next_time(schedule, first) == at("2026-11-01T01:30:00-05:00")


def test_an_hourly_schedule_across_both_changes_in_berlin() -> None:
    schedule = cron.parse("@hourly", "Europe/Berlin")
    spring = list(islice(cron.times_after(schedule, at("2026-03-29T00:30:00+01:00")), 3))
    assert spring == [
        at("2026-03-29T01:00:00+01:00"),
        at("2026-03-29T03:00:00+02:00"),  # 02:00 does not exist
        at("2026-03-29T04:00:00+02:00"),
    ]
    autumn = list(islice(cron.times_after(schedule, at("2026-10-25T01:30:00+02:00")), 3))
    assert autumn == [
        at("2026-10-25T02:00:00+02:00"),
        at("2026-10-25T02:00:00+01:00"),  # 02:00 again, an hour later
        at("2026-10-25T03:00:00+01:00"),
    ]
    assert len(set(autumn)) == 3


def test_the_times_until_a_moment_come_latest_first() -> None:
    schedule = cron.parse("*/20 * * * *")
    found = list(islice(cron.times_until(schedule, T0.replace(minute=40)), 3))
    assert found == [T0.replace(minute=40), T0.replace(minute=20), T0.replace(minute=0)]


def test_a_schedule_that_never_comes_has_no_next_time() -> None:
    assert cron.next_time(cron.parse("0 0 31 2 *"), T0) is None  # the 31st of February
