"""What a CronExecution does now, as the CronJob controller decides for a CronJob.

- The time to run is the schedule's most recent time since the last one it
  ran (or since it was created), at most ``now``: after downtime, the
  missed times run once, as one catch-up, never one run each. More than
  ``TOO_MANY_MISSED`` missed times are reported (an Event), and the catch-up
  still runs.
- A time older than ``startingDeadlineSeconds`` is not run (an Event says so),
  and missed times before that deadline are not counted.
- ``concurrencyPolicy``: ``Allow`` runs beside active runs; ``Forbid`` does
  not start a run while one is active: the time waits, and runs once the
  active one has ended if it is still the latest (and within the starting
  deadline), as the CronJob controller leaves it; ``Replace`` cancels the
  active runs and starts the new one.
- A run is named ``<cron>-<scheduled time in unix minutes>``, so a restarted
  operator that decides the same time again finds it, never a twin.
- Finished runs beyond the history limits are deleted, oldest first, each
  kind (completed; failed, cancelled, interrupted) by its own limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from agentjobs.contract.scheduling import cron

TOO_MANY_MISSED = 100


class Concurrency(Enum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


@dataclass(frozen=True)
class Run:
    """One Execution a CronExecution started: its name, scheduled time and whether it has
    finished (and how)."""

    name: str
    scheduled: datetime
    finished: bool = False
    succeeded: bool = False


@dataclass(frozen=True)
class Due:
    """The time that is due now, if any, and what stands around it."""

    time: datetime | None  # None: nothing to run now
    missed: int = 0  # times passed without a run since the last one, this one included
    too_late: bool = False  # the time is older than the starting deadline: not run


@dataclass(frozen=True)
class Plan:
    """What to do now, and when to look again."""

    create: str | None  # the Execution to create, by name
    scheduled: datetime | None  # its scheduled time (lastScheduleTime once created)
    cancel: tuple[str, ...]  # active runs to cancel first (Replace)
    delete: tuple[str, ...]  # finished runs past the history limits
    events: tuple[tuple[str, str], ...]  # (reason, message) to post
    next_time: datetime | None  # the next time the schedule runs after now


def run_name(cron_name: str, scheduled: datetime) -> str:
    """``<cron>-<unix minute>``: the same time always gives the same name."""
    return f"{cron_name}-{int(scheduled.timestamp()) // 60}"


def due(
    schedule: cron.Schedule,
    *,
    since: datetime,
    now: datetime,
    starting_deadline_seconds: int | None,
) -> Due:
    """The time to run now: the latest scheduled time after ``since`` (the last scheduled
    time, or the CronExecution's creation) and at most ``now``."""
    earliest = since
    if starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=starting_deadline_seconds))
    latest = next(cron.times_until(schedule, now), None)
    if latest is None or latest <= since:
        return Due(None)
    missed = 0
    for time in cron.times_after(schedule, earliest):
        if time > now or missed > TOO_MANY_MISSED:
            break
        missed += 1
    too_late = (
        starting_deadline_seconds is not None
        and latest + timedelta(seconds=starting_deadline_seconds) < now
    )
    return Due(latest, missed=missed, too_late=too_late)


@dataclass(frozen=True)
class CronState:
    """A CronExecution as the plan needs it."""

    name: str
    schedule: cron.Schedule
    created: datetime
    last_scheduled: datetime | None
    concurrency: Concurrency = Concurrency.ALLOW
    starting_deadline_seconds: int | None = None
    suspend: bool = False
    successful_limit: int = 3
    failed_limit: int = 1


def plan(state: CronState, runs: list[Run], *, now: datetime) -> Plan:
    """What to do at ``now``, given the runs the CronExecution owns."""
    delete = past_history(runs, state.successful_limit, state.failed_limit)
    upcoming = cron.next_time(state.schedule, now)
    nothing = Plan(None, None, (), delete, (), upcoming)
    if state.suspend:
        return nothing
    found = due(
        state.schedule,
        since=state.last_scheduled or state.created,
        now=now,
        starting_deadline_seconds=state.starting_deadline_seconds,
    )
    events: list[tuple[str, str]] = []
    if found.missed > TOO_MANY_MISSED:
        events.append(
            (
                "TooManyMissedTimes",
                f"more than {TOO_MANY_MISSED} start times were missed: check clock skew, "
                "or set startingDeadlineSeconds; the latest one runs",
            )
        )
    if found.time is None:
        return nothing
    when = found.time.isoformat()
    if found.too_late:
        reason = f"missed the run of {when}: it is older than startingDeadlineSeconds"
        return Plan(None, None, (), delete, (*events, ("MissSchedule", reason)), upcoming)
    name = run_name(state.name, found.time)
    if any(run.name == name for run in runs):
        return nothing  # created before a restart, or by another replica
    active = tuple(run.name for run in runs if not run.finished)
    if active and state.concurrency is Concurrency.FORBID:
        reason = f"the run of {when} waits: {', '.join(active)} is still running (Forbid)"
        return Plan(None, None, (), delete, (*events, ("RunWaits", reason)), upcoming)
    cancel = active if state.concurrency is Concurrency.REPLACE else ()
    return Plan(name, found.time, cancel, delete, tuple(events), upcoming)


def past_history(runs: list[Run], successful_limit: int, failed_limit: int) -> tuple[str, ...]:
    """The finished runs past their kind's history limit, oldest first."""
    finished = sorted((run for run in runs if run.finished), key=lambda run: run.scheduled)
    succeeded = [run.name for run in finished if run.succeeded]
    failed = [run.name for run in finished if not run.succeeded]
    return tuple(
        succeeded[: max(len(succeeded) - successful_limit, 0)]
        + failed[: max(len(failed) - failed_limit, 0)]
    )
