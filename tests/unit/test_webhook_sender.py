"""R50, R51: the webhook sender against a real receiver on loopback (an aiohttp server).

Cases: the receiver verifies the signature with its own HMAC (stdlib only)
and gets the exact CloudEvent bytes and content type; 500 twice then 200
delivers once with the same webhook-id every time; a 400 fails at once
after one call; a receiver slower than the timeout is retried and then
delivered; a redirect is not followed; a closed port is a retried error; a
name that resolves only to a forbidden address is never connected to, also
by the real rule (loopback no pattern named); an IP literal the rule forbids
is not sent; neither logs nor errors show the URL's path or query, and a
refusal keeps the status code and its standard phrase, never the body (R59).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import UTC, datetime

import pytest

from agentjobs.adapters import webhook_sender
from agentjobs.contract.notifications import delivery, message, signing, targets
from agentjobs.models.notifications import Answer, HttpAnswer, NoAnswer, NotificationRecord, NotSent
from agentjobs.models.resource_status import ExecutionResourceStatus
from tests.unit.webhook_receiver import PATH, QUERY, SECRET, Receiver, serving

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
EXECUTION = message.ExecutionRef(namespace="team-a", name="notes", uid="uid-9")
STATUS = ExecutionResourceStatus.model_validate(
    {"status": "completed", "finishedAt": NOW.isoformat(), "deliverableProduced": True}
)


async def attempt(url: str, record: NotificationRecord, *, timeout: float = 2.0) -> Answer:
    """One attempt as the wiring makes it: check, build, sign with this second's time, send."""
    target = targets.check(url, targets.parse_patterns(["http://127.0.0.1:*/*"]))
    event = message.execution_finished(EXECUTION, STATUS, include_outcome=False)
    headers = signing.headers(
        signing.signing_key(SECRET),
        message_id=record.id,
        timestamp=int(datetime.now(UTC).timestamp()),
        body=event.body,
    )
    return await webhook_sender.send(
        url=target.url,
        authority=target.authority,
        content_type=event.content_type,
        body=event.body,
        headers=headers,
        forbidden=target.forbidden,
        timeout=timeout,
    )


def pending() -> NotificationRecord:
    return NotificationRecord(
        notify=0,
        target="127.0.0.1",
        event="Finished",
        id=message.execution_event_id(EXECUTION),
        state="Pending",
    )


async def deliver(receiver: Receiver, *, timeout: float = 2.0) -> NotificationRecord:
    """Attempts until the record settles, jumping the clock to each next attempt."""
    record, now = pending(), NOW
    async with serving(receiver) as url:
        while record.state == "Pending":
            record = delivery.after_attempt(
                record, await attempt(url, record, timeout=timeout), now=now
            )
            now = record.next_attempt_at or now
    return record


def test_r50_the_receiver_verifies_the_signature_and_gets_the_cloudevent() -> None:
    receiver = Receiver(answers=[200])
    record = asyncio.run(deliver(receiver))
    assert record.state == "Delivered"
    ((headers, body, verified),) = receiver.calls
    assert verified
    assert headers["content-type"] == "application/cloudevents+json"
    assert headers["webhook-id"] == "uid-9-execution-finished"
    assert body == message.execution_finished(EXECUTION, STATUS, include_outcome=False).body


def test_r51_500_twice_then_200_delivers_once_with_the_same_webhook_id() -> None:
    receiver = Receiver(answers=[500, 500, 200])
    record = asyncio.run(deliver(receiver))
    assert (record.state, record.attempts) == ("Delivered", 3)
    assert [headers["webhook-id"] for headers, _, _ in receiver.calls] == [record.id] * 3
    assert all(verified for _, _, verified in receiver.calls)
    assert len({body for _, body, _ in receiver.calls}) == 1


def test_r51_a_400_fails_at_once_after_one_call() -> None:
    receiver = Receiver(answers=[400])
    record = asyncio.run(deliver(receiver))
    assert record.state == "Failed"
    assert record.last_error == "HTTP 400 Bad Request"  # R59: never the receiver's body
    assert len(receiver.calls) == 1


def test_r51_a_timeout_is_retried_and_then_delivered() -> None:
    receiver = Receiver(answers=[200], delay_first=1.5)
    record = asyncio.run(deliver(receiver, timeout=0.5))
    assert (record.state, record.attempts) == ("Delivered", 2)
    assert len(receiver.calls) == 2


def test_a_redirect_is_not_followed() -> None:
    receiver = Receiver(answers=[302])
    record = asyncio.run(deliver(receiver))
    assert record.state == "Failed"
    assert len(receiver.calls) == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_r51_a_closed_port_is_an_error_that_is_retried() -> None:
    url = f"http://127.0.0.1:{free_port()}{PATH}?{QUERY}"
    answer = asyncio.run(attempt(url, pending()))
    assert isinstance(answer, NoAnswer)
    assert answer.error.startswith(f"could not connect to {url.split('/')[2]}")
    assert delivery.after_attempt(pending(), answer, now=NOW).state == "Pending"


def test_r49_a_name_resolving_only_to_a_forbidden_address_is_never_connected_to() -> None:
    receiver = Receiver(answers=[200])

    def loopback_forbidden(host: str) -> str | None:
        return "forbidden in this test" if host in {"127.0.0.1", "::1"} else None

    async def run() -> Answer:
        async with serving(receiver) as url:
            return await webhook_sender.send(
                url=url.replace("127.0.0.1", "localhost"),
                authority="localhost",
                content_type="application/cloudevents+json",
                body=b"{}",
                headers={"webhook-id": "x"},
                forbidden=loopback_forbidden,
            )

    answer = asyncio.run(run())
    assert answer == NotSent("localhost resolves only to addresses the operator never calls", False)
    assert receiver.calls == []


def test_r59_what_a_name_resolves_to_is_judged_by_the_real_rule_before_connecting() -> None:
    receiver = Receiver(answers=[200])
    # The name itself passes (as a DNS name under a broad pattern would); its addresses,
    # 127.0.0.1 and ::1, are loopback that no pattern named.
    broad = targets.check("http://hooks.example.com/", targets.parse_patterns(["http://*/*"]))

    def by_name_then_rule(host: str) -> str | None:
        return None if host == "localhost" else broad.forbidden(host)

    async def run() -> Answer:
        async with serving(receiver) as url:
            return await webhook_sender.send(
                url=url.replace("127.0.0.1", "localhost"),
                authority="localhost",
                content_type="application/cloudevents+json",
                body=b"{}",
                headers={"webhook-id": "x"},
                forbidden=by_name_then_rule,
            )

    answer = asyncio.run(run())
    assert answer == NotSent("localhost resolves only to addresses the operator never calls", False)
    assert receiver.calls == []


def test_r49_a_forbidden_ip_literal_is_not_sent() -> None:
    answer = asyncio.run(
        webhook_sender.send(
            url="http://169.254.169.254/latest/meta-data/",
            authority="169.254.169.254",
            content_type="application/cloudevents+json",
            body=b"{}",
            headers={},
            forbidden=targets.forbidden_host,
        )
    )
    assert isinstance(answer, NotSent) and not answer.retry


def test_neither_logs_nor_errors_show_the_path_or_query(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    receiver = Receiver(answers=[500, 200])
    record = asyncio.run(deliver(receiver))
    closed = asyncio.run(attempt(f"http://127.0.0.1:{free_port()}{PATH}?{QUERY}", pending()))
    assert isinstance(record, NotificationRecord) and isinstance(closed, NoAnswer)
    assert "webhook uid-9-execution-finished to 127.0.0.1" in caplog.text
    shown = caplog.text + record.model_dump_json() + closed.error
    assert "S3CRET" not in shown
    assert SECRET.decode() not in shown


def test_the_sender_answers_http_statuses_as_values() -> None:
    receiver = Receiver(answers=[503])

    async def run() -> Answer:
        async with serving(receiver) as url:
            return await attempt(url, pending())

    answer = asyncio.run(run())
    assert answer == HttpAnswer(status=503, retry_after=None)
