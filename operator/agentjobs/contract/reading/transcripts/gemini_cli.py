"""Gemini CLI ``--output-format stream-json``.

- Words: ``message`` events with ``role: assistant``. Their ``delta``
  pieces are concatenated into one message, which any other event ends
  (a tool call, a result).
- End: ``result``; ``status: "error"`` is a failed run, its message in
  ``error.message`` or else the last ``error`` event's (Gemini CLI can
  stream a whole answer and still end in error).
- Usage: ``result.stats``, only at the end; its ``input_tokens`` include the
  ``cached`` ones. The model is ``init``'s ``model``.
- Turns: each assistant message (its first delta).
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
    uncached,
    usage_of,
)

ERROR_KEPT = 4096
NO_MESSAGE = "the agent CLI reported that its run failed, without a message"


def identifies(event: JsonObject) -> bool:
    event_type = type_of(event)
    if event_type == "init":
        return True
    if event_type == "message":
        return "delta" in event
    if event_type in ("tool_use", "tool_result"):
        return "tool_id" in event
    return event_type == "result" and "stats" in event


class GeminiCliDecoder:
    def __init__(self) -> None:
        self._turn = 0  # deltas within one turn form one message
        self._counted_turn = -1  # the last turn counted as an assistant turn
        self._last_error: str | None = None

    def decode(self, event: JsonObject) -> EventMeaning:
        event_type = type_of(event)
        if event_type == "message" and event.get("role") == "assistant":
            content = text_of(event.get("content"))
            if event.get("delta") is True:
                if content is None:
                    return NOTHING
                fresh, self._counted_turn = self._counted_turn != self._turn, self._turn
                return EventMeaning(
                    texts=(AgentText(content, message=f"turn-{self._turn}", delta=True),),
                    turns=1 if fresh else 0,
                )
            self._turn += 1
            texts = (AgentText(content),) if content is not None else ()
            return EventMeaning(texts=texts, turns=1)
        self._turn += 1
        if event_type == "init":
            return EventMeaning(model=text_of(event.get("model")))
        if event_type == "error":
            message = text_of(event.get("message"))
            self._last_error = message[:ERROR_KEPT] if message else self._last_error
            return NOTHING
        if event_type == "result":
            return self._result(event)
        return NOTHING

    def _result(self, event: JsonObject) -> EventMeaning:
        error: CliError | None = None
        if event.get("status") == "error":
            detail = text_of((object_of(event.get("error")) or {}).get("message"))
            error = CliError(detail or self._last_error or NO_MESSAGE)
        stats = object_of(event.get("stats")) or {}
        usage = usage_of(
            input_tokens=uncached(stats.get("input_tokens"), stats.get("cached")),
            output_tokens=stats.get("output_tokens"),
            cache_read=stats.get("cached"),
        )
        return EventMeaning(terminal=Terminal(error=error), usage=usage)
