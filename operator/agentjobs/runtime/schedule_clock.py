"""The time schedules run by (R74): the wall clock, or for tests one that runs faster.

A fast clock counts from a real moment ``start`` at ``speed`` times the wall clock's
pace, so that every operator process given the same two reads the same time, across
restarts; a CronExecution's minute then passes in a second of a test.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class ScheduleClock:
    start: datetime | None = None  # None: the wall clock
    speed: float = 1.0

    def now(self) -> datetime:
        real = datetime.now(UTC)
        if self.start is None:
            return real
        return self.start + (real - self.start) * self.speed

    def seconds_until(self, moment: datetime) -> float:
        """Real seconds until the clock shows ``moment`` (0 when it has passed)."""
        return max((moment - self.now()).total_seconds() / self.speed, 0.0)
