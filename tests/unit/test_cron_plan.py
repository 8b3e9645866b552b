"""What a CronExecution does at a moment, as the CronJob controller would (issue 28).

Cases: nothing before the first time; the time that came since the last one
runs, named by its unix minute; after downtime, one catch-up of the latest
missed time, never one per time, with an Event past 100 missed; a time older
than startingDeadlineSeconds is not run (and the deadline bounds the count);
a run already there (a restart) is never made twice; Forbid lets the time
wait while a run is active, Replace cancels the active runs, Allow runs
beside them; suspend starts nothing but still trims the history; finished
runs past each kind's limit are deleted, oldest first; the next time is
always given.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentjobs.contract.scheduling import cron
from agentjobs.contract.scheduling.cron_plan import (
    Concurrency,
    CronState,
    Run,
    past_history,
    plan,
    run_name,
)

CREATED = datetime(2026, 12, 5, 9, 0, 30, tzinfo=UTC)
EVERY_MINUTE = cron.parse("* * * * *")


def state(**fields: object) -> CronState:
    values: dict[str, object] = {
        "name": "nightly",
        "schedule": EVERY_MINUTE,
        "created": CREATED,
        "last_scheduled": None,
    }
    values.update(fields)
    return CronState(**values)  # type: ignore[arg-type]


def minute(n: int) -> datetime:
    return datetime(2026, 12, 5, 9, n, tzinfo=UTC)


def test_nothing_runs_before_the_first_time_and_the_next_is_given() -> None:
    decided = plan(state(), [], now=CREATED + timedelta(seconds=10))
    assert decided.create is None and decided.next_time == minute(1)


def test_the_time_that_came_runs_named_by_its_unix_minute() -> None:
    decided = plan(state(), [], now=minute(1) + timedelta(seconds=2))
    assert decided.create == f"nightly-{int(minute(1).timestamp()) // 60}"
    assert decided.scheduled == minute(1) and decided.events == ()
    assert run_name("nightly", minute(1)) == decided.create


def test_after_downtime_only_the_latest_missed_time_runs() -> None:
    decided = plan(state(last_scheduled=minute(1)), [], now=minute(30) + timedelta(seconds=5))
    assert decided.scheduled == minute(30)
    assert decided.events == ()
    long_down = plan(state(last_scheduled=minute(1)), [], now=minute(1) + timedelta(hours=3))
    assert long_down.scheduled == minute(1) + timedelta(hours=3)
    assert [reason for reason, _ in long_down.events] == ["TooManyMissedTimes"]


def test_a_time_past_the_starting_deadline_is_not_run_and_the_deadline_bounds_the_count() -> None:
    late = plan(state(starting_deadline_seconds=30), [], now=minute(1) + timedelta(seconds=45))
    assert late.create is None
    assert [reason for reason, _ in late.events] == ["MissSchedule"]
    bounded = plan(
        state(last_scheduled=minute(1), starting_deadline_seconds=600),
        [],
        now=minute(1) + timedelta(hours=3),
    )
    assert bounded.create is not None and bounded.events == ()


def test_a_run_already_there_is_never_made_twice() -> None:
    now = minute(2) + timedelta(seconds=1)
    existing = Run(run_name("nightly", minute(2)), minute(2))
    assert plan(state(last_scheduled=minute(1)), [existing], now=now).create is None


def test_the_concurrency_policies() -> None:
    now = minute(2) + timedelta(seconds=1)
    active = [Run("nightly-old", minute(1))]
    forbid = plan(state(concurrency=Concurrency.FORBID, last_scheduled=minute(1)), active, now=now)
    assert forbid.create is None and forbid.events[0][0] == "RunWaits"
    later = plan(
        state(concurrency=Concurrency.FORBID, last_scheduled=minute(1)),
        [Run("nightly-old", minute(1), finished=True, succeeded=True)],
        now=now + timedelta(seconds=20),
    )
    assert later.scheduled == minute(2)  # the time waited, and runs once the other ended
    replace = plan(
        state(concurrency=Concurrency.REPLACE, last_scheduled=minute(1)), active, now=now
    )
    assert replace.create is not None and replace.cancel == ("nightly-old",)
    allow = plan(state(last_scheduled=minute(1)), active, now=now)
    assert allow.create is not None and allow.cancel == ()


def test_suspend_starts_nothing_and_still_trims_the_history() -> None:
    runs = [Run(f"r{i}", minute(i), finished=True, succeeded=True) for i in range(5)]
    decided = plan(state(suspend=True), runs, now=minute(10))
    assert decided.create is None and decided.delete == ("r0", "r1")


def test_finished_runs_past_each_kinds_limit_go_oldest_first() -> None:
    runs = [
        Run("ok-1", minute(1), finished=True, succeeded=True),
        Run("bad-2", minute(2), finished=True),
        Run("ok-3", minute(3), finished=True, succeeded=True),
        Run("bad-4", minute(4), finished=True),
        Run("running-5", minute(5)),
    ]
    assert past_history(runs, successful_limit=1, failed_limit=1) == ("ok-1", "bad-2")
    assert past_history(runs, successful_limit=0, failed_limit=0) == (
        "ok-1",
        "ok-3",
        "bad-2",
        "bad-4",
    )
    assert past_history(runs, successful_limit=5, failed_limit=5) == ()
