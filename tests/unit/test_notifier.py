"""R49-R51: one reconcile's webhooks, end to end against a receiver on loopback.

Cases: an ended Execution's Finished event reaches the receiver signed, once,
and a later reconcile calls nothing; 500 twice then 200 delivers under one
webhook-id across three reconciles, each starting from the status as the API
server would hand it to a freshly started operator; PhaseFinished for each
ended phase; `outcome` in `data` only with includeOutcome; a URL outside the
allow-list is Failed with a message and never called; a missing Secret key
waits (Pending, with what is missing) and is delivered once it exists; a
Secret the operator may not read, or a key of the wrong format, says so.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.notifications import due, message, targets
from agentjobs.models.notifications import NotificationRecord
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec, PhaseSpec
from agentjobs.services.notifier import Notifier, SecretUnavailable
from tests.unit.webhook_receiver import PATH, QUERY, SECRET, Receiver, serving

NOW = datetime.now(UTC).replace(microsecond=0)  # signatures carry the real time
EXECUTION = message.ExecutionRef(namespace="team-a", name="notes", uid="uid-3")
ALLOWED = targets.parse_patterns(["http://127.0.0.1:*/*"])
OUTCOME = {
    "status": "success",
    "source": "agent",
    "summary": "Notes written.",
    "terminalReason": "finish_action",
    "reportedAt": NOW.isoformat(),
}
ENDED = ExecutionResourceStatus.model_validate(
    {
        "status": "completed",
        "finishedAt": NOW.isoformat(),
        "phases": [{"name": "draft", "status": "completed"}],
        "taskOutcome": OUTCOME,
    }
)
CHILDREN = [
    ChildPhase(
        resource_name="notes-0-draft",
        spec=PhaseSpec(execution_name="notes", index=0, name="draft", prompt="p"),
        status=PhaseResourceStatus.model_validate(
            {"status": "completed", "finishedAt": NOW.isoformat(), "taskOutcome": OUTCOME}
        ),
    )
]


class Secrets:
    """The Secrets of the namespace, as the API would serve them to the operator."""

    def __init__(self, values: dict[tuple[str, str], bytes]) -> None:
        self.values = values

    async def read(self, namespace: str, name: str, key: str) -> bytes:
        assert namespace == EXECUTION.namespace
        if (name, key) not in self.values:
            raise SecretUnavailable(f"Secret {name} has no key {key}", retry=True)
        return self.values[(name, key)]


def spec(url: str, **target: Any) -> ExecutionSpec:
    return ExecutionSpec.model_validate(
        {
            "defaults": {"image": "agent:1"},
            "phases": [{"name": "draft", "prompt": "p"}],
            "notify": [{"url": url, "secretRef": {"name": "hooks", "key": "signing"}, **target}],
        }
    )


def as_stored(
    status: ExecutionResourceStatus, records: list[NotificationRecord]
) -> ExecutionResourceStatus:
    """The status after the patch, read back as JSON as a restarted operator reads it."""
    patched = status.model_copy(update={"notifications": records})
    return ExecutionResourceStatus.model_validate(
        json.loads(patched.model_dump_json(by_alias=True))
    )


async def reconciles(
    receiver: Receiver, times: list[datetime], **target: Any
) -> list[NotificationRecord]:
    """One fresh Notifier per reconcile (a restart each time); the status carries over."""
    status = ENDED
    async with serving(receiver) as url:
        execution_spec = spec(target.pop("url", url), **target)
        for now in times:
            notifier = Notifier(
                allowed=ALLOWED,
                secret_name="hooks",
                read_secret=Secrets({("hooks", "signing"): SECRET}).read,
                timeout_seconds=2.0,
            )
            records = await notifier.settle(
                execution=EXECUTION,
                spec=execution_spec,
                status=status,
                children=CHILDREN,
                now=now,
            )
            status = as_stored(status, records)
    return list(status.notifications)


def test_r51_the_finished_event_is_delivered_once_and_a_later_reconcile_calls_nothing() -> None:
    receiver = Receiver(answers=[200])
    (record,) = asyncio.run(reconciles(receiver, [NOW, NOW + timedelta(seconds=5)]))
    assert (record.state, record.attempts) == ("Delivered", 1)
    assert record.target.startswith("127.0.0.1:")  # host and port: never the path or query
    ((headers, body, verified),) = receiver.calls
    assert verified
    assert headers["webhook-id"] == "uid-3-execution-finished"
    assert json.loads(body)["type"] == "io.agentjobs.execution.finished"


def test_r51_500_twice_then_200_across_restarts_delivers_once_under_one_id() -> None:
    receiver = Receiver(answers=[500, 500, 200])
    times = [NOW, NOW + timedelta(seconds=10), NOW + timedelta(seconds=30), NOW + timedelta(1)]
    (record,) = asyncio.run(reconciles(receiver, times))
    assert (record.state, record.attempts) == ("Delivered", 3)
    assert record.delivered_at == NOW + timedelta(seconds=30)
    assert [h["webhook-id"] for h, _, _ in receiver.calls] == ["uid-3-execution-finished"] * 3
    assert all(verified for _, _, verified in receiver.calls)


def test_r51_not_yet_due_means_not_called() -> None:
    receiver = Receiver(answers=[500, 200])
    (record,) = asyncio.run(reconciles(receiver, [NOW, NOW + timedelta(seconds=5)]))
    assert (record.state, len(receiver.calls)) == ("Pending", 1)
    assert record.next_attempt_at == NOW + timedelta(seconds=10)


def test_r49_phase_finished_and_the_outcome_only_when_asked() -> None:
    receiver = Receiver(answers=[200])
    records = asyncio.run(
        reconciles(receiver, [NOW], events=["PhaseFinished", "Finished"], includeOutcome=True)
    )
    assert [(r.event, r.phase, r.state) for r in records] == [
        ("PhaseFinished", "draft", "Delivered"),
        ("Finished", None, "Delivered"),
    ]
    bodies = {json.loads(body)["type"]: json.loads(body) for _, body, _ in receiver.calls}
    assert bodies["io.agentjobs.phase.finished"]["data"]["outcome"]["summary"] == "Notes written."
    assert bodies["io.agentjobs.execution.finished"]["data"]["outcome"]["status"] == "success"
    plain = Receiver(answers=[200])
    asyncio.run(reconciles(plain, [NOW]))
    ((_, body, _),) = plain.calls
    assert "outcome" not in json.loads(body)["data"]


def test_r49_a_url_outside_the_allow_list_is_failed_with_a_message_and_never_called() -> None:
    receiver = Receiver(answers=[200])
    outside = f"http://localhost:9/{PATH}?{QUERY}"
    (record,) = asyncio.run(reconciles(receiver, [NOW], url=outside))
    assert record.state == "Failed"
    assert record.attempts == 0
    assert record.last_error == (
        "http://localhost:9 is not allowed by the operator's --webhook-allow: it was never called"
    )
    assert receiver.calls == []


def test_a_missing_signing_key_waits_and_is_delivered_once_it_exists() -> None:
    receiver = Receiver(answers=[200])
    secrets = Secrets({})

    async def run() -> list[NotificationRecord]:
        status = ENDED
        async with serving(receiver) as url:
            for now in (NOW, NOW + timedelta(seconds=10)):
                records = await Notifier(
                    allowed=ALLOWED, read_secret=secrets.read, secret_name="hooks"
                ).settle(execution=EXECUTION, spec=spec(url), status=status, children=[], now=now)
                status = as_stored(status, records)
                if now == NOW:
                    assert status.notifications[0].state == "Pending"
                    assert status.notifications[0].last_error == (
                        "not sent: Secret hooks has no key signing"
                    )
                    secrets.values[("hooks", "signing")] = SECRET
        return list(status.notifications)

    (record,) = asyncio.run(run())
    assert (record.state, record.attempts, len(receiver.calls)) == ("Delivered", 2, 1)


def test_an_unreadable_secret_or_a_key_of_the_wrong_format_says_so() -> None:
    async def forbidden(namespace: str, name: str, key: str) -> bytes:
        raise SecretUnavailable(
            f"the operator may not read Secret {name} in {namespace}", retry=False
        )

    async def settle(read_secret: Any) -> NotificationRecord:
        (record,) = await Notifier(
            allowed=ALLOWED, read_secret=read_secret, secret_name="hooks"
        ).settle(
            execution=EXECUTION,
            spec=spec("http://127.0.0.1:9/x"),
            status=ENDED,
            children=[],
            now=NOW,
        )
        return record

    denied = asyncio.run(settle(forbidden))
    assert (denied.state, denied.last_error) == (
        "Failed",
        "not sent: the operator may not read Secret hooks in team-a",
    )
    wrong = asyncio.run(settle(Secrets({("hooks", "signing"): b"hunter2"}).read))
    assert wrong.state == "Pending"  # the Secret can still be fixed
    assert "not base64" in (wrong.last_error or "")
    assert "hunter2" not in wrong.model_dump_json()
    assert due.next_attempt([wrong]) == NOW + timedelta(seconds=10)
