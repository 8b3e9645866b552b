"""Builders of agent-CLI events for the tests, in the shapes each CLI prints (R13b-R13f)."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"


def line(event: dict[str, object]) -> str:
    return json.dumps(event) + "\n"


def claude_text(text: str, message_id: str | None = "msg_1", **extra: object) -> str:
    message: dict[str, object] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if message_id is not None:
        message["id"] = message_id
    return line({"type": "assistant", "message": message, **extra})


def claude_result(text: str | None = None, **extra: object) -> str:
    event: dict[str, object] = {"type": "result", "subtype": "success", "is_error": False}
    if text is not None:
        event["result"] = text
    return line({**event, **extra})


def codex_message(text: str) -> str:
    return line(
        {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": text}}
    )


def codex_command(output: str) -> str:
    item = {"id": "c", "type": "command_execution", "aggregated_output": output, "exit_code": 0}
    return line({"type": "item.completed", "item": item})


def codex_completed(**usage: int) -> str:
    return line({"type": "turn.completed", "usage": usage})


def codex_failed(message: str) -> str:
    return line({"type": "turn.failed", "error": {"message": message}})


def gemini_delta(text: str) -> str:
    return line({"type": "message", "role": "assistant", "content": text, "delta": True})


def gemini_tool() -> str:
    return line({"type": "tool_use", "tool_name": "read_file", "tool_id": "t1", "parameters": {}})


def gemini_result(status: str = "success", **extra: object) -> str:
    return line({"type": "result", "status": status, "stats": {"input_tokens": 0}, **extra})


def opencode_text(text: str, message_id: str = "msg_1") -> str:
    part = {"type": "text", "messageID": message_id, "text": text}
    return line({"type": "text", "sessionID": "ses_1", "part": part})


def opencode_finish(reason: str, **tokens: object) -> str:
    part = {"type": "step-finish", "reason": reason, "tokens": tokens, "cost": 0.5}
    return line({"type": "step_finish", "sessionID": "ses_1", "part": part})
