"""The Gemini API (`models/<model>:streamGenerateContent?alt=sse`), as Gemini CLI calls it.

Its `promptTokenCount` includes `cachedContentTokenCount`. Gemini CLI's own checks between
turns (which model, who speaks next) call the non-streaming `:generateContent`."""

from __future__ import annotations

import json

from tests.model_server.script import Refuse, RunShell, Say, Turn, Usage
from tests.model_server.wire import JsonObject, Reply, Request, event, json_reply, stream

ERRORS = {
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    404: (
        "NOT_FOUND",
        "models/{model} is not found for API version v1beta, or is not supported for "
        "generateContent. Call ListModels to see the list of available models and their "
        "supported methods.",
    ),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred. Please retry or try again later."),
}
# What the next-speaker check asks for: the model has finished, the user speaks next.
NEXT_SPEAKER = {"reasoning": "The answer is complete.", "next_speaker": "user"}


class Gemini:
    name = "gemini"

    def handles(self, path: str) -> bool:
        return path.startswith("/v1beta/models/") and "enerateContent" in path

    def api_key(self, request: Request) -> str | None:
        return request.headers.get("x-goog-api-key")

    def is_turn(self, request: Request) -> bool:
        return ":streamGenerateContent" in request.path and bool(request.body.get("tools"))

    def answer(self, turn: Turn, request: Request) -> Reply:
        model = _model(request.path)
        if isinstance(turn, Refuse):
            status, message = ERRORS[turn.status]
            error = {"code": turn.status, "message": message.format(model=model), "status": status}
            return json_reply(turn.status, {"error": error})
        if isinstance(turn, Say):
            parts: list[JsonObject] = [{"text": piece} for piece in turn.pieces]
            return _stream(model, parts, turn.usage)
        if isinstance(turn, RunShell):
            call = {"name": "run_shell_command", "args": {"command": turn.command}}
        else:
            call = {"name": "write_file", "args": {"file_path": turn.path, "content": turn.content}}
        return _stream(model, [{"functionCall": call}], turn.usage)

    def aside(self, request: Request) -> Reply:
        config = request.body.get("generationConfig") or {}
        wants_json = (
            isinstance(config, dict) and config.get("responseMimeType") == "application/json"
        )
        text = json.dumps(NEXT_SPEAKER) if wants_json else "ok"
        candidate = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "finishReason": "STOP",
            "index": 0,
        }
        body = {
            "candidates": [candidate],
            "usageMetadata": _usage(Usage(0, 0)),
            "modelVersion": _model(request.path),
        }
        if ":streamGenerateContent" in request.path:
            return stream([event(None, body)])
        return json_reply(200, body)


def _model(path: str) -> str:
    return path.removeprefix("/v1beta/models/").split(":")[0]


def _usage(usage: Usage) -> JsonObject:
    return {
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.prompt_tokens + usage.output_tokens,
        "cachedContentTokenCount": usage.cached_tokens,
    }


def _stream(model: str, parts: list[JsonObject], usage: Usage) -> Reply:
    """One chunk per part, the last with the finish reason and the usage."""
    chunks = []
    for index, part in enumerate(parts):
        candidate: JsonObject = {"content": {"role": "model", "parts": [part]}, "index": 0}
        chunk: JsonObject = {"candidates": [candidate], "modelVersion": model}
        if index == len(parts) - 1:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = _usage(usage)
        chunks.append(event(None, chunk))
    return stream(chunks)
