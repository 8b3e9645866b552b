"""What every vendor's encoder makes: an HTTP reply, streamed as server-sent events."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from tests.model_server.script import Turn

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    status: int
    content_type: str
    # Written and flushed one by one, so that a client sees the stream arrive in pieces.
    chunks: tuple[bytes, ...]


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]  # names in lower case
    body: JsonObject


def event(name: str | None, data: JsonObject) -> bytes:
    """One server-sent event; Gemini's stream has no event names."""
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def json_reply(status: int, body: JsonObject) -> Reply:
    return Reply(status, "application/json", (json.dumps(body).encode(),))


def stream(chunks: list[bytes]) -> Reply:
    return Reply(200, "text/event-stream", tuple(chunks))


class Vendor(Protocol):
    name: str

    def handles(self, path: str) -> bool: ...

    def api_key(self, request: Request) -> str | None: ...

    def is_turn(self, request: Request) -> bool:
        """Whether the request is the agent loop's, which the script's next turn answers."""
        ...

    def answer(self, turn: Turn, request: Request) -> Reply: ...

    def aside(self, request: Request) -> Reply:
        """The answer to a request outside the agent's loop (a title, a next-speaker check)."""
        ...
