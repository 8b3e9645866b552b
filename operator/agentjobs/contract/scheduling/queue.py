"""R75: which of a queue's Executions may start their first phase now, and each one's place.

An Execution naming a queue is admitted when its first own Phase is created; from then until
it finishes it holds one of the queue's ``maxRunning`` places, between its phases too. The
waiting ones are taken by ``priority`` (higher first), then creation time, then name, and only
as many as there are free places: one further down never starts before those above it. With
``maxStartsPerMinute`` no more are admitted in any 60 seconds than that; the first to wait for
it learns when the next start is allowed. A queue that does not exist admits nobody.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentjobs.kube import conditions
from agentjobs.models.resource_status import ExecutionResourceStatus, QueuePlace

QUEUED = conditions.QUEUED
RATE_WINDOW = timedelta(minutes=1)
RECHECK = timedelta(seconds=1)


@dataclass(frozen=True)
class Member:
    """One Execution naming the queue."""

    name: str
    priority: int
    created: datetime
    admitted_at: datetime | None  # when its first own Phase was made; None: it waits
    finished: bool


@dataclass(frozen=True)
class Limits:
    max_running: int
    max_starts_per_minute: int | None = None


@dataclass(frozen=True)
class Decision:
    """Whether the Execution starts now; if not, its place and why it waits, and when the
    rate limit lets the next one start (None: when a place frees)."""

    admit: bool
    position: int | None = None
    reason: str = ""
    retry_at: datetime | None = None


def waiting(members: Sequence[Member]) -> list[Member]:
    """The members still to start, in the order they will."""
    queued = [m for m in members if m.admitted_at is None and not m.finished]
    return sorted(queued, key=lambda m: (-m.priority, m.created, m.name))


def running(members: Sequence[Member]) -> list[Member]:
    return [m for m in members if m.admitted_at is not None and not m.finished]


def decide(
    name: str, queue: str, members: Sequence[Member], limits: Limits | None, *, now: datetime
) -> Decision:
    """The decision for member ``name`` of ``queue`` (it must be among ``members``)."""
    me = next((m for m in members if m.name == name), None)
    if me is None:  # not in the watch's copy of the queue yet: look again shortly
        return Decision(False, None, f"waiting to be seen in queue {queue}", now + RECHECK)
    if me.admitted_at is not None:  # its first Phase is made; the watch may not show it yet
        return Decision(True)
    if me.finished:  # ended while it waited: it takes no place
        return Decision(False, None, f"ended while it waited in queue {queue}")
    order = waiting(members)
    position = next(i for i, m in enumerate(order, start=1) if m.name == name)
    if limits is None:
        return Decision(False, position, f"ExecutionQueue {queue} does not exist")
    taken = len(running(members))
    free = limits.max_running - taken
    if position > free:
        return Decision(
            False,
            position,
            f"{taken} of the {limits.max_running} Executions queue {queue} runs at once are "
            f"running; this one is number {position} in line",
        )
    if limits.max_starts_per_minute is not None:
        recent = sorted(
            m.admitted_at
            for m in members
            if m.admitted_at is not None and m.admitted_at > now - RATE_WINDOW
        )
        left = limits.max_starts_per_minute - len(recent)
        if position > left:
            # This one's turn comes once as many starts have left the window as it is past
            # what is left; unknown while those before it have not started.
            behind = position - left
            retry_at = recent[behind - 1] + RATE_WINDOW if behind <= len(recent) else None
            return Decision(
                False,
                position,
                f"queue {queue} starts at most {limits.max_starts_per_minute} Executions a "
                f"minute; this one is number {position} in line",
                retry_at,
            )
    return Decision(True)


def queued_status(
    status: ExecutionResourceStatus,
    previous: ExecutionResourceStatus,
    *,
    queue: str,
    decision: Decision,
    generation: int | None,
    now: datetime,
) -> ExecutionResourceStatus:
    """The status of an Execution that waits: not started (no status yet), ``Queued`` with
    the reason, and its place."""
    message = decision.reason
    return status.model_copy(
        update={
            "status": None,
            "current_phase": None,
            "started_at": None,
            "finished_at": None,
            "task_outcome": None,
            "queue": QueuePlace(name=queue, position=decision.position),
            "conditions": conditions.with_condition(
                conditions.conditions_for(
                    "pending",
                    message=message,
                    previous=previous.conditions,
                    generation=generation,
                    now=now,
                ),
                QUEUED,
                true=True,
                reason="Waiting",
                message=message,
                generation=generation,
                now=now,
            ),
        }
    )


def left_status(
    status: ExecutionResourceStatus,
    *,
    queue: str,
    admitted_at: datetime | None,
    generation: int | None,
    now: datetime,
) -> ExecutionResourceStatus:
    """The status of an Execution out of the line: admitted (when it was let in), or ended
    before it was (cancelled while it waited); ``Queued`` false from then."""
    if admitted_at is not None:
        reason, message = "Admitted", f"admitted by queue {queue}"
    else:
        reason, message = "Ended", f"ended while it waited in queue {queue}"
    return status.model_copy(
        update={
            "queue": QueuePlace(name=queue, admitted_at=admitted_at),
            "conditions": conditions.with_condition(
                status.conditions,
                QUEUED,
                true=False,
                reason=reason,
                message=message,
                generation=generation,
                now=now,
            ),
        }
    )
