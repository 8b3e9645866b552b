"""The Anthropic Messages API (`POST /v1/messages`, `stream: true`), as Claude Code calls it.

Its usage counts cache reads apart: `input_tokens` are the uncached ones."""

from __future__ import annotations

import json

from tests.model_server.script import Refuse, RunShell, Say, Turn, Usage
from tests.model_server.wire import JsonObject, Reply, Request, event, json_reply, stream

ERRORS = {
    401: ("authentication_error", "invalid x-api-key"),
    404: ("not_found_error", "model: {model}"),
    429: ("rate_limit_error", "Number of requests has exceeded your rate limit"),
    500: ("api_error", "Internal server error"),
}


class Anthropic:
    name = "anthropic"

    def handles(self, path: str) -> bool:
        return path.split("?")[0].startswith("/v1/messages")

    def api_key(self, request: Request) -> str | None:
        return request.headers.get("x-api-key")

    def is_turn(self, request: Request) -> bool:
        return request.path.split("?")[0] == "/v1/messages" and bool(request.body.get("tools"))

    def answer(self, turn: Turn, request: Request) -> Reply:
        model = str(request.body.get("model"))
        if isinstance(turn, Refuse):
            kind, message = ERRORS[turn.status]
            body = {
                "type": "error",
                "error": {"type": kind, "message": message.format(model=model)},
            }
            return json_reply(turn.status, body)
        if isinstance(turn, Say):
            block: JsonObject = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in turn.pieces]
            return _message(model, block, deltas, "end_turn", turn.usage)
        if isinstance(turn, RunShell):
            name, arguments = "Bash", {"command": turn.command, "description": "Run a command"}
        else:
            name, arguments = "Write", {"file_path": turn.path, "content": turn.content}
        block = {"type": "tool_use", "id": "toolu_scripted", "name": name, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": json.dumps(arguments)}]
        return _message(model, block, deltas, "tool_use", turn.usage)

    def aside(self, request: Request) -> Reply:
        return _message(
            str(request.body.get("model")),
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": "ok"}],
            "end_turn",
            Usage(0, 0),
        )


def _message(
    model: str, block: JsonObject, deltas: list[JsonObject], stop: str, usage: Usage
) -> Reply:
    start: JsonObject = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": usage.cached_tokens,
            "output_tokens": 1,
        },
    }
    chunks = [
        event("message_start", {"type": "message_start", "message": start}),
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        *(
            event(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
            for delta in deltas
        ),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]
    return stream(chunks)
