"""When a finished Execution is deleted (ttlSecondsAfterFinished)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentjobs.contract.execution import ttl
from agentjobs.models.notifications import NotificationRecord
from agentjobs.models.resource_status import ExecutionResourceStatus
from agentjobs.models.resources import ExecutionSpec

FINISHED = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PHASES = [{"name": "a", "image": "busybox", "prompt": "p"}]


def spec(**fields: object) -> ExecutionSpec:
    return ExecutionSpec.model_validate({"phases": PHASES, **fields})


def test_the_executions_own_ttl_wins_over_the_default() -> None:
    ended = ExecutionResourceStatus(finished_at=FINISHED)
    own = spec(ttlSecondsAfterFinished=5)
    assert ttl.expires_at(own, ended, default=3600) == FINISHED + timedelta(seconds=5)
    assert ttl.expires_at(spec(), ended, default=60) == FINISHED + timedelta(seconds=60)
    assert ttl.expires_at(spec(ttlSecondsAfterFinished=0), ended, default=60) == FINISHED


def test_nothing_expires_while_running_or_without_a_ttl() -> None:
    assert (
        ttl.expires_at(spec(ttlSecondsAfterFinished=5), ExecutionResourceStatus(), default=None)
        is None
    )
    assert (
        ttl.expires_at(spec(), ExecutionResourceStatus(finished_at=FINISHED), default=None) is None
    )


def test_a_pending_notification_keeps_the_execution() -> None:
    def status(state: str) -> ExecutionResourceStatus:
        record = NotificationRecord.model_validate(
            {
                "notify": 0,
                "target": "hooks.example.com",
                "event": "Finished",
                "state": state,
                "id": "x",
            }
        )
        return ExecutionResourceStatus(finished_at=FINISHED, notifications=[record])

    own = spec(ttlSecondsAfterFinished=5)
    assert ttl.expires_at(own, status("Pending"), default=None) is None
    assert ttl.expires_at(own, status("Delivered"), default=None) is not None
    assert ttl.expires_at(own, status("Failed"), default=None) is not None
