"""What every handler of the console shares: who asks, the connection, the storage."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from agentjobs.adapters.object_store import ObjectStore
from agentjobs.console.access import Access, User

CONSOLE: web.AppKey[Console] = web.AppKey("console")


@dataclass(frozen=True)
class Console:
    access: Access
    store: ObjectStore | None  # None: no storage settings, so no stored transcripts or artifacts
    user_tokens: bool  # each request must carry the user's token


def console_of(request: web.Request) -> Console:
    return request.app[CONSOLE]


def user_of(request: web.Request) -> User:
    user: User = request["user"]
    return user
