"""R75: a queue's decisions, as pure functions.

Cases: free places go to the waiting by priority, then age, then name, and never to one
further down while one above it waits; running members (admitted, not finished) take the
places and finished ones give them back; a queue that does not exist admits nobody and says
so; `maxStartsPerMinute` holds back what would start past it, telling when the next start is
allowed; a member already admitted (its Phase not yet in the watch) is admitted again, one
not yet seen is looked at again shortly; the statuses say the place, keep the Execution
unstarted while it waits, and say when it was let in.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentjobs.contract.scheduling import queue
from agentjobs.contract.scheduling.queue import Decision, Limits, Member
from agentjobs.models.contract import ExecutionStatus
from agentjobs.models.resource_status import ExecutionResourceStatus, QueuePlace

NOW = datetime(2026, 12, 5, 9, tzinfo=UTC)


def member(
    name: str,
    priority: int = 0,
    age: int = 0,
    admitted: datetime | None = None,
    finished: bool = False,
) -> Member:
    return Member(name, priority, NOW - timedelta(seconds=age), admitted, finished)


def test_places_go_by_priority_then_age_then_name() -> None:
    members = [
        member("late", age=1),
        member("early", age=5),
        member("urgent", priority=10),
        member("b", age=3),
        member("a", age=3),
    ]
    order = [m.name for m in queue.waiting(members)]
    assert order == ["urgent", "early", "a", "b", "late"]
    limits = Limits(max_running=2)
    admitted = [
        m.name for m in members if queue.decide(m.name, "q", members, limits, now=NOW).admit
    ]
    assert sorted(admitted) == ["early", "urgent"]
    waiting = queue.decide("late", "q", members, limits, now=NOW)
    assert (waiting.admit, waiting.position, waiting.retry_at) == (False, 5, None)
    assert "0 of the 2 Executions queue q runs at once are running" in waiting.reason


def test_running_members_take_the_places_and_finished_ones_give_them_back() -> None:
    running = [member(f"r{i}", admitted=NOW) for i in range(3)]
    done = [member("done", admitted=NOW, finished=True)]
    members = [*running, *done, member("next")]
    assert not queue.decide("next", "q", members, Limits(3), now=NOW).admit
    members[0] = member("r0", admitted=NOW, finished=True)
    assert queue.decide("next", "q", members, Limits(3), now=NOW) == Decision(True)


def test_a_queue_that_does_not_exist_admits_nobody() -> None:
    decision = queue.decide("x", "missing", [member("x")], None, now=NOW)
    assert (decision.admit, decision.position) == (False, 1)
    assert decision.reason == "ExecutionQueue missing does not exist"


def test_the_start_rate_holds_back_what_would_pass_it() -> None:
    recent = [
        member(f"s{i}", admitted=NOW - timedelta(seconds=50 - i), finished=True) for i in (0, 1)
    ]
    old = [member("old", admitted=NOW - timedelta(minutes=5), finished=True)]
    members = [*recent, *old, member("a", age=2), member("b", age=1)]
    limits = Limits(max_running=10, max_starts_per_minute=3)
    assert queue.decide("a", "q", members, limits, now=NOW).admit
    held = queue.decide("b", "q", members, limits, now=NOW)
    assert (held.admit, held.position) == (False, 2)
    # b's turn comes when the oldest recent start leaves the minute.
    assert held.retry_at == NOW - timedelta(seconds=50) + timedelta(minutes=1)
    assert "at most 3 Executions a minute" in held.reason


def test_an_admitted_member_is_admitted_again_and_an_unseen_one_looked_at_again() -> None:
    members = [member("in", admitted=NOW), member("other")]
    assert queue.decide("in", "q", members, Limits(1), now=NOW) == Decision(True)
    unseen = queue.decide("new", "q", members, Limits(1), now=NOW)
    assert (unseen.admit, unseen.retry_at) == (False, NOW + timedelta(seconds=1))


def test_the_statuses_say_the_place_and_when_it_was_let_in() -> None:
    planned = ExecutionResourceStatus(status=ExecutionStatus.RUNNING, started_at=NOW)
    decision = Decision(False, 2, "number 2 in line")
    waiting = queue.queued_status(
        planned, ExecutionResourceStatus(), queue="q", decision=decision, generation=1, now=NOW
    )
    assert (waiting.status, waiting.started_at) == (None, None)
    assert waiting.queue == QueuePlace(name="q", position=2)
    queued = next(c for c in waiting.conditions if c.type == "Queued")
    assert (queued.status, queued.message) == ("True", "number 2 in line")
    assert next(c for c in waiting.conditions if c.type == "Running").status == "False"
    later = NOW + timedelta(minutes=3)
    running = planned.model_copy(update={"conditions": waiting.conditions})
    left = queue.left_status(running, queue="q", admitted_at=later, generation=1, now=later)
    assert left.queue == QueuePlace(name="q", admitted_at=later)
    released = next(c for c in left.conditions if c.type == "Queued")
    assert (released.status, released.reason, released.last_transition_time) == (
        "False",
        "Admitted",
        later,
    )
