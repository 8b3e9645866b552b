"""R49, R51: the pure parts of the webhooks' wiring into the Execution reconcile.

Cases: attempts are made only in a reconcile that has nothing but notifications
to write (a verdict is never delayed by a receiver), whatever the records say;
wake_at is now when a record is due, else its next attempt, else None; a notify
naming another Secret than the operator's, or any notify while webhooks are off,
is Failed at once with a message naming the chart value; the first backoff is
the operator's (--webhook-backoff-seconds) and doubles; `agentjobs run`'s
--webhook-* flags reach the config, and a bad pattern or backoff is refused;
the README's receiver example verifies the operator's signature and no other.
"""

from __future__ import annotations

import argparse
import base64
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentjobs.cli import run
from agentjobs.contract.notifications import delivery, due, message, signing, targets
from agentjobs.models.notifications import HttpAnswer, NotificationRecord
from agentjobs.models.resource_status import ExecutionResourceStatus
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime.config import OperatorConfig
from agentjobs.services.notifier import Notifier

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
EXECUTION = message.ExecutionRef(namespace="team-a", name="notes", uid="uid-9")
ALLOWED = targets.parse_patterns(["https://hooks.example.com/*"])
RUNNING = ExecutionResourceStatus.model_validate({"status": "running", "startedAt": NOW})
ENDED = ExecutionResourceStatus.model_validate(
    {"status": "failed", "startedAt": NOW, "finishedAt": NOW}
)


def record(state: str = "Pending", **fields: object) -> NotificationRecord:
    return NotificationRecord.model_validate(
        {"notify": 0, "target": "hooks.example.com", "event": "Finished", "id": "e1"}
        | {"state": state}
        | fields
    )


def spec(secret: str) -> ExecutionSpec:
    return ExecutionSpec.model_validate(
        {
            "defaults": {"image": "agent:1"},
            "phases": [{"name": "draft", "prompt": "p"}],
            "notify": [
                {"url": "https://hooks.example.com/x", "secretRef": {"name": secret, "key": "k"}}
            ],
        }
    )


def test_no_attempt_while_the_verdict_is_still_to_be_written() -> None:
    assert not due.attempt_now(ENDED, RUNNING)


def test_attempts_once_only_notifications_would_change() -> None:
    previous = ENDED.model_copy(update={"notifications": [record()]})
    attempted = ENDED.model_copy(update={"notifications": [record("Delivered", attempts=1)]})
    assert due.attempt_now(previous, previous)
    assert due.attempt_now(attempted, previous)
    assert not due.attempt_now(attempted.model_copy(update={"current_phase": "x"}), previous)


def test_wake_at_is_now_when_due_else_the_next_attempt_else_none() -> None:
    later = NOW + timedelta(seconds=30)
    assert due.wake_at([record()], now=NOW) == NOW
    assert due.wake_at([record(next_attempt_at=later)], now=NOW) == later
    assert due.wake_at([record(next_attempt_at=NOW - timedelta(seconds=1))], now=NOW) == NOW
    assert due.wake_at([record("Delivered"), record("Failed")], now=NOW) is None


@pytest.mark.parametrize(
    ("secret", "readable", "says"),
    [
        ("other", "agentjobs-webhooks", "secretRef.name must be 'agentjobs-webhooks'"),
        ("agentjobs-webhooks", None, "webhooks are off"),
    ],
)
def test_a_secret_the_operator_may_not_read_fails_the_notify_at_once(
    secret: str, readable: str | None, says: str
) -> None:
    (refused,) = due.notifications(
        spec(secret), ENDED, [], execution=EXECUTION, allowed=ALLOWED, secret_name=readable
    )
    assert refused.state == "Failed"
    assert refused.attempts == 0
    assert refused.last_error is not None
    assert says in refused.last_error
    assert "webhooks." in refused.last_error  # names the chart value to set
    assert due.wake_at([refused], now=NOW) is None


def test_the_one_readable_secret_is_owed_pending() -> None:
    (owed,) = due.notifications(
        spec("agentjobs-webhooks"),
        ENDED,
        [],
        execution=EXECUTION,
        allowed=ALLOWED,
        secret_name="agentjobs-webhooks",
    )
    assert (owed.state, owed.last_error) == ("Pending", None)
    assert signing.secret_refusal("agentjobs-webhooks", "agentjobs-webhooks") is None


def test_the_first_backoff_is_the_operators_and_doubles() -> None:
    first = delivery.after_attempt(
        record(), HttpAnswer(500), now=NOW, first_delay=timedelta(seconds=1)
    )
    second = delivery.after_attempt(
        first, HttpAnswer(500), now=NOW, first_delay=timedelta(seconds=1)
    )
    assert first.next_attempt_at == NOW + timedelta(seconds=1)
    assert second.next_attempt_at == NOW + timedelta(seconds=2)
    assert delivery.backoff(1) == timedelta(seconds=10)


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    return parser.parse_args(list(flags))


def test_the_webhook_flags_default_to_off() -> None:
    args = parse()
    assert args.webhook_allow == []
    assert args.webhook_secret_name is None
    assert args.webhook_backoff_seconds == OperatorConfig.webhook_backoff_seconds == 10.0


def test_the_webhook_flags_are_read() -> None:
    args = parse(
        "--webhook-allow=https://a.example/*",
        "--webhook-allow=http://127.0.0.1:8080/*",
        "--webhook-secret-name=hooks",
        "--webhook-backoff-seconds=0.5",
    )
    assert args.webhook_allow == ["https://a.example/*", "http://127.0.0.1:8080/*"]
    assert (args.webhook_secret_name, args.webhook_backoff_seconds) == ("hooks", 0.5)


@pytest.mark.parametrize(
    "flags", [["--webhook-allow=ftp://a.example/*"], ["--webhook-backoff-seconds=0"]]
)
def test_bad_webhook_flags_are_refused(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(*flags)
    assert "--webhook-" in capsys.readouterr().err


def test_the_readmes_receiver_verifies_the_operators_signature() -> None:
    section = (REPO / "README.md").read_text().split("## Completion webhooks", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 12
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # the README's own example, run as written
    secret = "whsec_" + base64.b64encode(bytes(range(32))).decode()
    body = b'{"type": "io.agentjobs.execution.finished"}'
    headers = signing.headers(
        signing.signing_key(secret.encode()),
        message_id="e1",
        timestamp=int(time.time()),
        body=body,
    )
    assert namespace["verified"](secret, headers, body)
    assert not namespace["verified"](secret, headers, body + b" ")
    assert not namespace["verified"](secret, {**headers, "webhook-id": "e2"}, body)


def test_owed_records_what_is_due_and_never_sends() -> None:
    async def never(**_: object) -> HttpAnswer:
        raise AssertionError("owed() must not send")

    async def no_secret(namespace: str, name: str, key: str) -> bytes:
        raise AssertionError("owed() must not read the Secret")

    notifier = Notifier(
        allowed=ALLOWED, read_secret=no_secret, secret_name="agentjobs-webhooks", send=never
    )
    (owed,) = notifier.owed(
        execution=EXECUTION, spec=spec("agentjobs-webhooks"), status=ENDED, children=[]
    )
    assert (owed.state, owed.attempts, owed.next_attempt_at) == ("Pending", 0, None)
    assert due.wake_at([owed], now=NOW) == NOW  # attempted at the very next reconcile
