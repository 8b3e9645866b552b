"""A webhook receiver on loopback (an aiohttp server) for the webhook tests.

It verifies each call's signature with its own HMAC (the standard library
only, as a receiver would), answers from a script and records every call.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web

SECRET = b"whsec_" + base64.b64encode(bytes(range(7, 39)))
PATH = "/hooks/S3CRET-PATH"
QUERY = "token=S3CRET-QUERY"


@dataclass
class Receiver:
    """A webhook receiver that answers from a script and records every call."""

    answers: list[int]
    delay_first: float = 0.0
    calls: list[tuple[dict[str, str], bytes, bool]] = field(default_factory=list)

    def verifies(self, headers: dict[str, str], body: bytes) -> bool:
        key = base64.b64decode(SECRET.decode().removeprefix("whsec_"))
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        return hmac.compare_digest(expected, headers["webhook-signature"])

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.calls.append((headers, body, self.verifies(headers, body)))
        if self.delay_first and len(self.calls) == 1:
            await asyncio.sleep(self.delay_first)
        status = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if status == 302:
            raise web.HTTPFound("/elsewhere")
        return web.Response(status=status, text="invalid signature" if status == 400 else "ok")


@asynccontextmanager
async def serving(receiver: Receiver) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post(PATH, receiver.handle)
    app.router.add_post("/elsewhere", receiver.handle)
    runner = web.AppRunner(app, access_log=None)  # the receiver's own log is not ours
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}{PATH}?{QUERY}"
    finally:
        await runner.cleanup()
