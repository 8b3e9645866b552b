"""Cron schedules as the CronJob controller reads them (robfig/cron's standard parser).

Five fields, ``minute hour day-of-month month day-of-week``, each ``*`` (or
``?`` in the day fields), a number, a range ``a-b``, a step ``x/n`` (``a/n``
runs from ``a`` to the field's end) or a list of those; months and weekdays
by their three-letter English names too; weekdays 0-6 from Sunday. The
macros ``@yearly`` (``@annually``), ``@monthly``, ``@weekly``, ``@daily``
(``@midnight``) and ``@hourly`` stand for their five fields. When both day
fields are restricted, a day matches either; when one of them is ``*``, both
must match (as Vixie cron does).

Times are wall-clock times in the schedule's time zone, as the CronJob
controller runs them: a time that a daylight-saving change skips does not
run that day; a time it repeats runs at both instants.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

SEARCH_YEARS = 5  # as robfig/cron: a schedule with no time in five years has none
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_NUMBER = re.compile(r"[0-9]+")


class ScheduleError(ValueError):
    """A schedule or time zone that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # name i stands for low + i


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, tuple(_MONTHS)),
    _Field("day of week", 0, 6, tuple(_WEEKDAYS)),
)


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 is Sunday
    any_day: bool  # day of month was * or ?
    any_weekday: bool
    zone: ZoneInfo

    def day_matches(self, day: date) -> bool:
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week


def parse(schedule: str, time_zone: str | None = None) -> Schedule:
    """``schedule`` in ``time_zone`` (an IANA name; None is UTC); ScheduleError says why not."""
    zone = _zone(time_zone)
    text = schedule.strip()
    if text.startswith("@"):
        if text.split()[0] == "@every":
            raise ScheduleError("@every is not a cron schedule: use the five fields")
        if text not in MACROS:
            raise ScheduleError(f"unknown macro {text!r}: use one of {', '.join(MACROS)}")
        text = MACROS[text]
    if text.upper().startswith(("TZ=", "CRON_TZ=")):
        raise ScheduleError("give the time zone in timeZone, not in the schedule")
    parts = text.split()
    if len(parts) != len(_FIELDS):
        raise ScheduleError(
            f"a schedule has 5 fields (minute hour day-of-month month day-of-week), "
            f"not {len(parts)}: {schedule!r}"
        )
    values = [_values(part, field) for part, field in zip(parts, _FIELDS, strict=True)]
    return Schedule(
        minutes=values[0],
        hours=values[1],
        days=values[2],
        months=values[3],
        weekdays=values[4],
        any_day=parts[2] in ("*", "?"),
        any_weekday=parts[4] in ("*", "?"),
        zone=zone,
    )


def _zone(time_zone: str | None) -> ZoneInfo:
    if time_zone is None:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ScheduleError(f"unknown time zone {time_zone!r}: use an IANA name") from error


def _values(part: str, field: _Field) -> frozenset[int]:
    found: set[int] = set()
    for item in part.split(","):
        found.update(_item(item, field))
    return frozenset(found)


def _item(item: str, field: _Field) -> range:
    where = f"{field.name} {item!r}"
    span, _, step_text = item.partition("/")
    step = 1
    if step_text:
        if not _NUMBER.fullmatch(step_text) or int(step_text) == 0:
            raise ScheduleError(f"{where}: the step must be a positive number")
        step = int(step_text)
    if span in ("*", "?"):
        if span == "?" and field.name not in ("day of month", "day of week"):
            raise ScheduleError(f"{where}: '?' is only for the day fields")
        return range(field.low, field.high + 1, step)
    low_text, dash, high_text = span.partition("-")
    low = _number(low_text, field, where)
    high = _number(high_text, field, where) if dash else (field.high if step_text else low)
    if high < low:
        raise ScheduleError(f"{where}: the range runs backwards")
    return range(low, high + 1, step)


def _number(text: str, field: _Field, where: str) -> int:
    lowered = text.lower()
    if lowered in field.names:
        return field.low + field.names.index(lowered)
    if not _NUMBER.fullmatch(text):
        raise ScheduleError(
            f"{where}: {text!r} is not a number{' or a name' if field.names else ''}"
        )
    value = int(text)
    if not field.low <= value <= field.high:
        raise ScheduleError(f"{where}: {value} is outside {field.low}-{field.high}")
    return value


def times_after(schedule: Schedule, moment: datetime) -> Iterator[datetime]:
    """The schedule's times strictly after ``moment`` (aware), in order, as UTC instants,
    for at most ``SEARCH_YEARS`` years."""
    local = moment.astimezone(schedule.zone)
    day = local.date()
    last = day + timedelta(days=366 * SEARCH_YEARS)
    while day <= last:
        if day.month in schedule.months and schedule.day_matches(day):
            for instant in _instants_on(schedule, day):
                if instant > moment:
                    yield instant
        day += timedelta(days=1)


def _instants_on(schedule: Schedule, day: date) -> list[datetime]:
    """The UTC instants of the day's matching wall-clock times: none for a time a DST change
    skips, two for one it repeats."""
    found = []
    for hour in sorted(schedule.hours):
        for minute in sorted(schedule.minutes):
            wall = datetime(day.year, day.month, day.day, hour, minute)
            for fold in (0, 1):
                instant = wall.replace(tzinfo=schedule.zone, fold=fold).astimezone(UTC)
                if instant.astimezone(schedule.zone).replace(tzinfo=None) == wall:
                    found.append(instant)
    return sorted(set(found))


def next_time(schedule: Schedule, moment: datetime) -> datetime | None:
    """The schedule's first time strictly after ``moment``; None when none comes."""
    return next(times_after(schedule, moment), None)


def times_until(schedule: Schedule, moment: datetime) -> Iterator[datetime]:
    """The schedule's times at or before ``moment``, latest first, as UTC instants, for at
    most ``SEARCH_YEARS`` years back."""
    local = moment.astimezone(schedule.zone)
    day = local.date()
    first = day - timedelta(days=366 * SEARCH_YEARS)
    while day >= first:
        if day.month in schedule.months and schedule.day_matches(day):
            for instant in reversed(_instants_on(schedule, day)):
                if instant <= moment:
                    yield instant
        day -= timedelta(days=1)
