"""Webhook targets a tenant names, under an admin's broad allow pattern (R59).

The operator allows `http://*:*/*` and, by name, one loopback receiver of this test. The
tenant's Execution notifies: that receiver's IPv4-mapped form and the operator's own host
as `localhost` (loopback no pattern names), the metadata address as NAT64 (an IPv6 form
of 169.254.169.254), and the receiver by its allowed name, which answers 400 with
a body carrying a canary. Each refused target is Failed with its reason and never called;
the allowed one is called once, and its body is nowhere in the Execution: `lastError` is
the status and its standard phrase.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    free_port,
    wait_finished,
    wait_for,
)
from tests.security.conftest import Tenant, leaks

pytestmark = pytest.mark.integration
SECRET_NAME = "agentjobs-webhooks"
SIGNING = "whsec_" + base64.b64encode(bytes(range(40, 72))).decode()
CANARY = f"canary-{secrets.token_hex(8)}"


class Receiver:
    """A receiver on 127.0.0.1 that answers 400 with the canary in its body."""

    def __init__(self) -> None:
        self.port = free_port()
        self.calls: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.calls.append(request.path)
        return web.Response(status=400, text=f"rejected: {CANARY}")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/{path:.*}", found.handle)
    runner = web.AppRunner(app, access_log=None)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def serve() -> None:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", found.port).start()

    asyncio.run_coroutine_threadsafe(serve(), loop).result(timeout=10)
    yield found
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def target(url: str) -> dict[str, Any]:
    return {"url": url, "secretRef": {"name": SECRET_NAME, "key": "signing"}}


def execution(port: int) -> dict[str, Any]:
    report = {"success": True, "side_effects": "none", "comments": "ok"}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "hooks"},
        "spec": {
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Work.",
                    "command": ["sh", "-c"],
                    "args": [
                        'echo hi > "$AGENTJOBS_OUTPUT_DIR/out.txt"; '
                        f"echo 'TASK_RESULT: {json.dumps(report)}'; echo TASK_RESULT_END"
                    ],
                }
            ],
            "notify": [
                target(f"http://[::ffff:127.0.0.1]:{port}/mapped"),
                target(f"http://localhost:{port}/by-name"),
                target("http://[64:ff9b::a9fe:a9fe]/latest/meta-data/"),
                target(f"http://127.0.0.1:{port}/named"),
            ],
        },
    }


def test_embedded_metadata_and_unnamed_loopback_are_never_called_and_bodies_never_kept(
    kubectl: Kubectl, tenant: Tenant, s3_env: dict[str, str], receiver: Receiver, tmp_path: Path
) -> None:
    kubectl.run(
        "create", "secret", "generic", SECRET_NAME, "-n", tenant.namespace,
        f"--from-literal=signing={SIGNING}",
    )  # fmt: skip
    operator = OperatorProcess(
        s3_env,
        tenant.namespace,
        tmp_path / "operator.log",
        [
            "--webhook-allow=http://*:*/*",
            "--webhook-allow=http://*/*",
            f"--webhook-allow=http://127.0.0.1:{receiver.port}/named",
            f"--webhook-secret-name={SECRET_NAME}",
        ],
    )
    operator.start()
    try:
        tenant.kubectl.apply(execution(receiver.port), tenant.namespace)
        wait_finished(tenant.kubectl, tenant.namespace, "hooks")

        def records() -> list[dict[str, Any]]:
            status = tenant.kubectl.json("get", "-n", tenant.namespace, "execution", "hooks")
            found: list[dict[str, Any]] = status.get("status", {}).get("notifications", [])
            return found

        wait_for(
            lambda: len(records()) == 4 and all(r["state"] == "Failed" for r in records()),
            timeout=60,
            what="every notification to settle",
        )
    finally:
        operator.stop()
        print(operator.log()[-10000:])
    mapped, by_name, nat64, named = records()
    for record in (mapped, by_name):
        assert "loopback" in record["lastError"] and record["attempts"] == 0, record
    assert "IPv6 form of 169.254.169.254" in nat64["lastError"] and nat64["attempts"] == 0
    assert named["lastError"] == "HTTP 400 Bad Request" and named["attempts"] == 1
    assert receiver.calls == ["/named"]
    assert leaks(kubectl, tenant.namespace, CANARY) == []
