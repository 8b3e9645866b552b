"""When an Execution's status waits for a Phase it has just created.

The reconciler creates a Phase and its runner writes the Phase's first status a moment
later. Written in between, the Execution's status would show that Phase pending, and be
written again with it running straight after: at a thousand phases that second write was
a thirtieth of every request the API server got. So while a Phase this reconciler created
has no status, for ``GRACE`` at most, the Execution's status waits for it; after that it
is written as it stands (a runner that is slow to start still shows as pending).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

GRACE = timedelta(seconds=5)


class PhaseStarts:
    """The Phases created lately, by namespace and name, with when their wait ends."""

    def __init__(self) -> None:
        self._until: dict[tuple[str, str], datetime] = {}

    def created(self, namespace: str, phase: str, *, now: datetime) -> None:
        # Waits nobody asked about to their end (their Execution went) are dropped here.
        self._until = {key: until for key, until in self._until.items() if until > now}
        self._until[namespace, phase] = now + GRACE

    def wait_until(
        self, namespace: str, phases: Iterable[tuple[str, bool]], *, now: datetime
    ) -> datetime | None:
        """Until when to wait for ``phases`` (each its name and whether it has a status);
        None: write now."""
        latest: datetime | None = None
        for phase, has_status in phases:
            key = (namespace, phase)
            until = self._until.get(key)
            if until is None:
                continue
            if has_status or until <= now:
                del self._until[key]
            elif latest is None or until > latest:
                latest = until
        return latest
