"""Completion webhooks end to end on the local cluster (R49-R51).

A real `agentjobs run` (with `--webhook-allow http://127.0.0.1:PORT/*`, the
Secret name `agentjobs-webhooks` and a 1 s first backoff) runs one-phase
Executions whose `notify[]` point at aiohttp receivers on loopback in this
test. Signatures are checked here with the standard library's hmac. Cases:

- a receiver that answers 500 twice, then 204, gets three attempts of one
  Finished event, all with the same webhook-id and body and a valid
  signature, and nothing after; `outcome` is in `data` only for the target
  with `includeOutcome`; a URL outside --webhook-allow and a notify naming
  another Secret are Failed with a message, and their receiver is never called;
- an operator killed between a failed and a successful attempt, and started
  again, delivers the event once more, under the same webhook-id, and only once.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    free_port,
    running,
    wait_finished,
    wait_for,
)

SECRET_NAME = "agentjobs-webhooks"
KEY = bytes(range(100, 132))
SECRET = "whsec_" + base64.b64encode(KEY).decode()


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 that records each request per path and answers each
    path's scripted statuses in turn (the last one from then on)."""

    port: int
    answers: dict[str, list[int]] = field(default_factory=dict)
    received: dict[str, list[Received]] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        got = self.received.setdefault(request.path, [])
        got.append(Received(dict(request.headers), body))
        script = self.answers.get(request.path, [204])
        return web.Response(status=script[min(len(got), len(script)) - 1])

    def count(self, path: str) -> int:
        return len(self.received.get(path, []))


@pytest.fixture
def receivers() -> Iterator[tuple[Receiver, Receiver]]:
    """Two receivers in one thread's event loop: one allowed, one outside the allow-list."""
    allowed, outside = Receiver(free_port()), Receiver(free_port())
    loop = asyncio.new_event_loop()
    runners: list[web.AppRunner] = []

    async def serve(receiver: Receiver) -> None:
        app = web.Application()
        app.router.add_post("/{path:.*}", receiver.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", receiver.port).start()
        runners.append(runner)

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    for receiver in (allowed, outside):
        asyncio.run_coroutine_threadsafe(serve(receiver), loop).result(timeout=10)
    yield allowed, outside
    for runner in runners:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()  # an unclosed loop's self-pipe warns, as an error, in a later test


@pytest.fixture
def webhook_operator(
    s3_env: dict[str, str],
    crds: None,
    kubectl: Kubectl,
    namespace: str,
    tmp_path: Path,
    receivers: tuple[Receiver, Receiver],
) -> Iterator[OperatorProcess]:
    kubectl.run(
        "create", "secret", "generic", SECRET_NAME, "-n", namespace,
        f"--from-literal=signing={SECRET}",
    )  # fmt: skip
    process = OperatorProcess(
        s3_env,
        namespace,
        tmp_path / "operator.log",
        [
            f"--webhook-allow=http://127.0.0.1:{receivers[0].port}/*",
            f"--webhook-secret-name={SECRET_NAME}",
            "--webhook-backoff-seconds=1",
        ],
    )
    yield from running(process)


def execution(name: str, *notify: dict[str, Any]) -> dict[str, Any]:
    report = {"success": True, "side_effects": "succeeded", "comments": "notes written"}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": "write",
                    "image": BUSYBOX,
                    "prompt": "Write it.",
                    "command": ["sh", "-c"],
                    "args": [
                        'echo "# Notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"; '
                        "echo 'I wrote the notes for version two with every change listed.'; "
                        f"echo 'TASK_RESULT: {json.dumps(report)}'; echo TASK_RESULT_END"
                    ],
                }
            ],
            "notify": list(notify),
        },
    }


def target(url: str, **fields: Any) -> dict[str, Any]:
    return {"url": url, "secretRef": {"name": SECRET_NAME, "key": "signing"}, **fields}


def notifications(kubectl: Kubectl, namespace: str, name: str) -> list[dict[str, Any]]:
    status = kubectl.json("get", "-n", namespace, "execution", name).get("status", {})
    records: list[dict[str, Any]] = status.get("notifications", [])
    return records


def settled(kubectl: Kubectl, namespace: str, name: str, count: int) -> bool:
    records = notifications(kubectl, namespace, name)
    return len(records) == count and all(r["state"] != "Pending" for r in records)


def assert_signed(received: Received) -> dict[str, Any]:
    """The request's Standard Webhooks signature is valid for the test's key; its event."""
    headers = {k.lower(): v for k, v in received.headers.items()}
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + received.body
    expected = "v1," + base64.b64encode(hmac.new(KEY, signed, hashlib.sha256).digest()).decode()
    assert hmac.compare_digest(headers["webhook-signature"], expected)
    event: dict[str, Any] = json.loads(received.body)
    assert event["id"] == headers["webhook-id"]
    return event


def test_one_signed_finished_event_per_end_after_two_500s_and_refusals_never_called(
    kubectl: Kubectl,
    namespace: str,
    webhook_operator: OperatorProcess,
    receivers: tuple[Receiver, Receiver],
) -> None:
    allowed, outside = receivers
    allowed.answers["/flaky"] = [500, 500, 204]
    kubectl.apply(
        execution(
            "notified",
            target(allowed.url("/flaky")),
            target(allowed.url("/outcome"), includeOutcome=True),
            target(outside.url("/outside")),
            {**target(allowed.url("/other-secret")), "secretRef": {"name": "x", "key": "k"}},
        ),
        namespace,
    )
    status = wait_finished(kubectl, namespace, "notified")
    assert status["status"] == "completed"
    wait_for(lambda: settled(kubectl, namespace, "notified", 4), timeout=30, what="deliveries")
    flaky, outcome, refused, other_secret = notifications(kubectl, namespace, "notified")

    assert (flaky["state"], flaky["attempts"], flaky["event"]) == ("Delivered", 3, "Finished")
    assert flaky["target"] == f"127.0.0.1:{allowed.port}"  # the host only, never the path
    attempts = allowed.received["/flaky"]
    assert len(attempts) == 3
    assert {a.headers["webhook-id"] for a in attempts} == {flaky["id"]}
    assert {a.body for a in attempts} == {attempts[0].body}  # the same event every time
    events = [assert_signed(a) for a in attempts]
    assert events[0]["type"] == "io.agentjobs.execution.finished"
    assert events[0]["specversion"] == "1.0"
    assert events[0]["data"]["status"] == "completed"
    assert "outcome" not in events[0]["data"]

    assert (outcome["state"], outcome["attempts"]) == ("Delivered", 1)
    (with_outcome,) = allowed.received["/outcome"]
    assert assert_signed(with_outcome)["data"]["outcome"]["status"] == "success"

    assert (refused["state"], refused["attempts"]) == ("Failed", 0)
    assert "--webhook-allow" in refused["lastError"]
    assert (other_secret["state"], other_secret["attempts"]) == ("Failed", 0)
    assert f"secretRef.name must be '{SECRET_NAME}'" in other_secret["lastError"]
    # Nothing more comes: a delivered event is not sent again, a refused one never.
    kubectl.run("annotate", "-n", namespace, "execution", "notified", "poke=1")
    time.sleep(3)
    assert (allowed.count("/flaky"), allowed.count("/outcome")) == (3, 1)
    assert allowed.count("/other-secret") == 0
    assert outside.received == {}


def test_an_operator_restart_between_a_failed_and_a_good_attempt_still_delivers_once(
    kubectl: Kubectl,
    namespace: str,
    webhook_operator: OperatorProcess,
    receivers: tuple[Receiver, Receiver],
) -> None:
    allowed, _ = receivers
    allowed.answers["/restart"] = [503]
    kubectl.apply(execution("restarted", target(allowed.url("/restart"))), namespace)
    wait_finished(kubectl, namespace, "restarted")
    wait_for(
        lambda: any(r["attempts"] for r in notifications(kubectl, namespace, "restarted")),
        timeout=30,
        what="a first failed attempt",
    )
    webhook_operator.kill()
    failed = allowed.count("/restart")
    (record,) = notifications(kubectl, namespace, "restarted")
    assert record["state"] == "Pending"
    assert record["lastError"].startswith("HTTP 503")
    allowed.answers["/restart"] = [204]  # the receiver is back while no operator runs
    webhook_operator.start()
    wait_for(lambda: settled(kubectl, namespace, "restarted", 1), timeout=30, what="delivery")
    (record,) = notifications(kubectl, namespace, "restarted")
    assert record["state"] == "Delivered"
    time.sleep(3)
    attempts = allowed.received["/restart"]
    assert len(attempts) == failed + 1  # exactly one good attempt, after the restart
    assert {a.headers["webhook-id"] for a in attempts} == {record["id"]}
    for attempt in attempts:
        assert_signed(attempt)
