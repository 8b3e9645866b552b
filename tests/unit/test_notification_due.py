"""R49, R51: which notifications an Execution owes, as a pure function of its status and phases.

Cases: nothing while it runs; one Finished per target once it has ended (not
before finishedAt is written); PhaseFinished once per ended phase, in phase
order, for targets that ask; a record already kept is never added twice
(reconciles settle, a restart resumes from the status, a Delivered or
Failed record stays as it is); a refused target's records are Failed with
the reason and its path never shown; ready and next_attempt read the
schedule back; replaced swaps one record; message_for builds each record's
event (the same bytes each time) and a phase no longer listed is told.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.notifications import delivery, due, message, targets
from agentjobs.models.notifications import HttpAnswer
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec, PhaseSpec

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
EXECUTION = message.ExecutionRef(namespace="team-a", name="notes", uid="uid-7")
ALLOWED = targets.parse_patterns(["https://hooks.example.com/*"])
TARGET = {"url": "https://hooks.example.com/T0KEN", "secretRef": {"name": "hook", "key": "k"}}


def spec(*notify: dict[str, Any]) -> ExecutionSpec:
    return ExecutionSpec.model_validate(
        {
            "defaults": {"image": "agent:1"},
            "phases": [{"name": "draft", "prompt": "p"}, {"name": "review", "prompt": "p"}],
            "notify": list(notify),
        }
    )


def child(index: int, name: str, status: str | None) -> ChildPhase:
    return ChildPhase(
        resource_name=f"notes-{index}-{name}",
        spec=PhaseSpec(execution_name="notes", index=index, name=name, prompt="p"),
        status=PhaseResourceStatus.model_validate(
            {"status": status, "finishedAt": NOW.isoformat()} if status != "running" else {}
        ),
    )


ENDS = due.phase_ends([child(1, "review", "failed"), child(0, "draft", "completed")])
RUNNING = ExecutionResourceStatus.model_validate({"status": "running"})
ENDED = ExecutionResourceStatus.model_validate(
    {"status": "failed", "finishedAt": NOW.isoformat(), "phases": []}
)


def owed(
    execution_spec: ExecutionSpec, status: ExecutionResourceStatus, ends: list[due.PhaseEnd]
) -> list[tuple[int, str, str | None, str, str]]:
    records = due.notifications(
        execution_spec, status, ends, execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    return [(r.notify, r.event, r.phase, r.state, r.id) for r in records]


def test_r49_nothing_is_owed_while_the_execution_runs() -> None:
    assert owed(spec(TARGET), RUNNING, []) == []
    without_end_time = ExecutionResourceStatus.model_validate({"status": "completed"})
    assert owed(spec(TARGET), without_end_time, []) == []


def test_r49_one_finished_per_target_once_the_execution_has_ended() -> None:
    other = {**TARGET, "url": "https://hooks.example.com/other"}
    assert owed(spec(TARGET, other), ENDED, ENDS) == [
        (0, "Finished", None, "Pending", "uid-7-execution-finished"),
        (1, "Finished", None, "Pending", "uid-7-execution-finished"),
    ]


def test_r49_phase_finished_once_per_ended_phase_in_phase_order() -> None:
    both = {**TARGET, "events": ["PhaseFinished", "Finished"]}
    assert owed(spec(both), ENDED, ENDS) == [
        (0, "PhaseFinished", "draft", "Pending", "uid-7-phase-draft-finished"),
        (0, "PhaseFinished", "review", "Pending", "uid-7-phase-review-finished"),
        (0, "Finished", None, "Pending", "uid-7-execution-finished"),
    ]
    running = due.phase_ends([child(0, "draft", "completed"), child(1, "review", "running")])
    assert owed(spec({**TARGET, "events": ["PhaseFinished"]}), RUNNING, running) == [
        (0, "PhaseFinished", "draft", "Pending", "uid-7-phase-draft-finished"),
    ]


def test_r51_a_recorded_notification_is_never_added_again_and_keeps_its_state() -> None:
    execution_spec = spec({**TARGET, "events": ["Finished", "PhaseFinished"]})
    first = due.notifications(
        execution_spec, ENDED, ENDS, execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    sent = delivery.after_attempt(first[0], HttpAnswer(200), now=NOW)
    failed = delivery.after_attempt(first[1], HttpAnswer(500), now=NOW)
    status = ENDED.model_copy(update={"notifications": [sent, failed, first[2]]})
    again = due.notifications(
        execution_spec, status, ENDS, execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    assert again == [sent, failed, first[2]]
    # A restart reads the same status back and finds the same schedule.
    restored = ExecutionResourceStatus.model_validate(status.model_dump(mode="json", by_alias=True))
    assert due.notifications(
        execution_spec, restored, ENDS, execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    ) == [sent, failed, first[2]]


def test_r49_a_refused_target_is_failed_at_once_with_the_reason_and_never_its_path() -> None:
    outside = {**TARGET, "url": "http://intranet.example.com/T0KEN?key=S3CRET"}
    (record,) = due.notifications(
        spec(outside), ENDED, [], execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    assert record.state == "Failed"
    assert record.attempts == 0
    assert record.target == "intranet.example.com"
    assert "not allowed by the operator's --webhook-allow" in (record.last_error or "")
    assert "T0KEN" not in record.model_dump_json()
    assert "S3CRET" not in record.model_dump_json()
    assert due.ready([record], now=NOW) == []


def test_the_target_shown_of_an_allowed_url_is_its_host() -> None:
    (record,) = due.notifications(
        spec(TARGET), ENDED, [], execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    assert record.target == "hooks.example.com"


def test_r51_ready_and_next_attempt_read_the_schedule_from_the_records() -> None:
    records = due.notifications(
        spec(TARGET, {**TARGET, "url": "https://hooks.example.com/b"}),
        ENDED,
        [],
        execution=EXECUTION,
        allowed=ALLOWED,
        secret_name="hook",
    )
    assert due.ready(records, now=NOW) == records  # never tried: due now
    assert due.next_attempt(records) is None
    later = delivery.after_attempt(records[0], HttpAnswer(503), now=NOW)
    records = due.replaced(records, later)
    assert records[0] == later
    assert due.ready(records, now=NOW) == [records[1]]
    assert due.next_attempt(records) == NOW + delivery.FIRST_DELAY
    assert due.ready(records, now=NOW + timedelta(seconds=10)) == records


def test_message_for_builds_each_records_event_the_same_each_time() -> None:
    execution_spec = spec(
        {**TARGET, "events": ["PhaseFinished", "Finished"], "includeOutcome": True}
    )
    records = due.notifications(
        execution_spec, ENDED, ENDS, execution=EXECUTION, allowed=ALLOWED, secret_name="hook"
    )
    built = [
        due.message_for(record, execution_spec, ENDED, ENDS, execution=EXECUTION)
        for record in records
    ]
    assert [event.id for event in built] == [record.id for record in records]
    assert built[0] == due.message_for(records[0], execution_spec, ENDED, ENDS, execution=EXECUTION)
    assert b'"source": "/apis/agentjobs.io/v1alpha1/namespaces/team-a/phases/notes-1-review"' in (
        built[1].body
    )
    with pytest.raises(LookupError, match="no longer listed"):
        due.message_for(records[1], execution_spec, ENDED, ENDS[:1], execution=EXECUTION)
