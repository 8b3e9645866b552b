"""The OpenAI Responses API (`POST /v1/responses`, `stream: true`), as Codex calls it.

Its `input_tokens` include the cached ones (`input_tokens_details.cached_tokens`). Codex
writes files with `apply_patch`, a free-form tool whose input is a patch."""

from __future__ import annotations

import json
from itertools import count

from tests.model_server.script import Refuse, RunShell, Say, Turn, Usage
from tests.model_server.wire import JsonObject, Reply, Request, event, json_reply, stream

ERRORS = {
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", None, "The server had an error while processing your request."),
}


class OpenAI:
    name = "openai"

    def handles(self, path: str) -> bool:
        return path.split("?")[0].endswith("/responses")

    def api_key(self, request: Request) -> str | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return token if scheme.lower() == "bearer" else None

    def is_turn(self, request: Request) -> bool:
        return bool(request.body.get("tools"))

    def answer(self, turn: Turn, request: Request) -> Reply:
        model = str(request.body.get("model"))
        if isinstance(turn, Refuse):
            kind, code, message = ERRORS[turn.status]
            error = {
                "message": message.format(model=model),
                "type": kind,
                "param": None,
                "code": code,
            }
            return json_reply(turn.status, {"error": error})
        if isinstance(turn, Say):
            return _response(model, _message(turn.pieces), turn.usage)
        if isinstance(turn, RunShell):
            item: JsonObject = {
                "type": "function_call",
                "id": "fc_scripted",
                "call_id": "call_scripted",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": turn.command}),
                "status": "completed",
            }
        else:
            lines = "".join(f"+{line}\n" for line in turn.content.splitlines())
            item = {
                "type": "custom_tool_call",
                "id": "ctc_scripted",
                "call_id": "call_scripted",
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Add File: {turn.path}\n{lines}*** End Patch\n",
                "status": "completed",
            }
        return _response(model, ([], item), turn.usage)

    def aside(self, request: Request) -> Reply:
        return _response(str(request.body.get("model")), _message(("ok",)), Usage(0, 0))


def _message(pieces: tuple[str, ...]) -> tuple[list[JsonObject], JsonObject]:
    """The text deltas of an assistant message, and the message whole."""
    text = "".join(pieces)
    deltas = [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_scripted",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
        }
        for piece in pieces
    ]
    item = {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return deltas, item


def _response(model: str, output: tuple[list[JsonObject], JsonObject], usage: Usage) -> Reply:
    deltas, item = output
    sequence = count()
    response: JsonObject = {"id": "resp_scripted", "object": "response", "model": model}

    def sent(data: JsonObject) -> bytes:
        return event(str(data["type"]), {**data, "sequence_number": next(sequence)})

    completed = {
        **response,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.prompt_tokens + usage.output_tokens,
        },
    }
    chunks = [
        sent(
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": []},
            }
        ),
        sent(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            }
        ),
        *(sent(delta) for delta in deltas),
        sent({"type": "response.output_item.done", "output_index": 0, "item": item}),
        sent({"type": "response.completed", "response": completed}),
    ]
    return stream(chunks)
