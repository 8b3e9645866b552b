"""OpenCode ``opencode run --format json``: ``{"type", "timestamp", "sessionID", "part"}``.

- Words: ``text`` parts (``part.text``), one message per ``part.messageID``.
- End: OpenCode prints no end of its own. The last ``step_finish`` with
  ``reason: stop`` ends a run (a later one with another reason takes that
  back), and an ``error`` event ends it failed (OpenCode can still exit 0).
- Usage: each ``step_finish``'s ``tokens`` and ``cost``.
- Turns: each ``step_start`` (one call of the model).
"""

from __future__ import annotations

from agentjobs.contract.reading.transcripts.meaning import (
    NOTHING,
    AgentText,
    CliError,
    EventMeaning,
    JsonObject,
    Terminal,
    object_of,
    text_of,
    type_of,
    usage_of,
)

PART_EVENTS = frozenset({"step_start", "step_finish", "text", "tool_use", "reasoning"})
NO_MESSAGE = "the agent CLI reported an error, without a message"


def identifies(event: JsonObject) -> bool:
    event_type = type_of(event)
    if event_type in PART_EVENTS:
        return object_of(event.get("part")) is not None
    return event_type == "error" and "sessionID" in event


class OpenCodeDecoder:
    def decode(self, event: JsonObject) -> EventMeaning:
        event_type = type_of(event)
        part = object_of(event.get("part")) or {}
        if event_type == "text":
            text = text_of(part.get("text"))
            if text is None:
                return NOTHING
            return EventMeaning(texts=(AgentText(text, message=text_of(part.get("messageID"))),))
        if event_type == "step_start":
            return EventMeaning(turns=1)
        if event_type == "step_finish":
            tokens = object_of(part.get("tokens")) or {}
            cache = object_of(tokens.get("cache")) or {}
            usage = usage_of(
                input_tokens=tokens.get("input"),
                output_tokens=tokens.get("output"),
                cache_creation=cache.get("write"),
                cache_read=cache.get("read"),
                cost=part.get("cost"),
            )
            if part.get("reason") == "stop":
                return EventMeaning(terminal=Terminal(), usage=usage)
            return EventMeaning(usage=usage, run_continues=True)
        if event_type == "error":
            return EventMeaning(terminal=Terminal(error=CliError(_error_message(event))))
        return NOTHING


def _error_message(event: JsonObject) -> str:
    error = object_of(event.get("error")) or {}
    data = object_of(error.get("data")) or {}
    for value in (data.get("message"), error.get("message"), error.get("name")):
        if isinstance(value, str) and value.strip():
            return value
    return NO_MESSAGE
