"""OpenAI Codex CLI ``codex exec --json``, in both of the shapes it has printed.

Current shape: ``thread.started``, ``turn.started``, ``item.*`` events.

- Words: ``agent_message`` items (``item.text``) of ``item.completed``.
- End: ``turn.completed`` (with the turn's usage) or ``turn.failed``
  (``error.message``). A top-level ``error`` event is not the end: Codex
  prints them while it retries ("Reconnecting... 2/5").
- Turns: ``turn.started`` (``codex exec`` runs one turn per prompt). Usage
  arrives only at a turn's end, and no event names the model.

Older shape: ``{"id": ..., "msg": {"type": ...}}`` after a config summary.

- Words: ``agent_message`` (``msg.message``).
- End: ``task_complete`` (``last_agent_message``, the final text) or
  ``error`` (``msg.message``). Usage: each ``token_count``'s counts; where
  they sit under ``info``, ``total_token_usage`` is the run's running total
  (repeated unchanged with rate-limit updates), so only its growth is added.
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
from agentjobs.contract.text.usage import Spend

CURRENT_EVENTS = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
    }
)
# An error message is kept only until the turn fails, and only this much of it.
ERROR_KEPT = 4096
NO_MESSAGE = "the agent CLI reported that its turn failed, without a message"


def identifies(event: JsonObject) -> bool:
    return type_of(event) in CURRENT_EVENTS or (
        "id" in event and object_of(event.get("msg")) is not None
    )


class CodexDecoder:
    def __init__(self) -> None:
        self._last_error: str | None = None
        self._running_total = Spend()

    def decode(self, event: JsonObject) -> EventMeaning:
        old_shape = object_of(event.get("msg"))
        if old_shape is not None:
            if old_shape.get("type") == "token_count" and "info" in old_shape:
                return EventMeaning(usage=self._growth(old_shape.get("info")))
            return _old_shape(old_shape)
        event_type = type_of(event)
        if event_type == "item.completed":
            item = object_of(event.get("item")) or {}
            if item.get("type") == "agent_message":
                text = text_of(item.get("text"))
                return EventMeaning(texts=(AgentText(text),) if text is not None else ())
            if item.get("type") == "error":
                self._remember(item.get("message"))
            return NOTHING
        if event_type == "error":
            self._remember(event.get("message"))
            return NOTHING
        if event_type == "turn.started":
            return EventMeaning(turns=1)
        if event_type == "turn.completed":
            return EventMeaning(terminal=Terminal(), usage=_usage(event.get("usage")))
        if event_type == "turn.failed":
            message = text_of((object_of(event.get("error")) or {}).get("message"))
            error = CliError(message or self._last_error or NO_MESSAGE)
            return EventMeaning(terminal=Terminal(error=error), usage=_usage(event.get("usage")))
        return NOTHING

    def _growth(self, info: object) -> Spend | None:
        """What the running total in ``info`` adds to the last one seen."""
        total = _usage((object_of(info) or {}).get("total_token_usage"))
        if total is None:
            return None
        previous, self._running_total = self._running_total, total
        growth = {
            name: max((getattr(total, name) or 0) - (getattr(previous, name) or 0), 0)
            for name in ("input_tokens", "output_tokens", "cache_read_input_tokens")
        }
        return usage_of(
            input_tokens=growth["input_tokens"],
            output_tokens=growth["output_tokens"],
            cache_read=growth["cache_read_input_tokens"],
        )

    def _remember(self, message: object) -> None:
        if isinstance(message, str) and message:
            self._last_error = message[:ERROR_KEPT]


def _old_shape(msg: JsonObject) -> EventMeaning:
    msg_type = msg.get("type")
    if msg_type == "agent_message":
        text = text_of(msg.get("message"))
        return EventMeaning(texts=(AgentText(text),) if text is not None else ())
    if msg_type == "task_complete":
        return EventMeaning(terminal=Terminal(text=text_of(msg.get("last_agent_message"))))
    if msg_type == "error":
        error = CliError(text_of(msg.get("message")) or NO_MESSAGE)
        return EventMeaning(terminal=Terminal(error=error))
    if msg_type == "token_count":
        return EventMeaning(usage=_usage(msg))
    return NOTHING


def _usage(value: object) -> Spend | None:
    """Codex counts cached tokens inside ``input_tokens``; ``inputTokens`` is the rest, as
    in Claude Code's counts, so that sums over phases add like with like."""
    counts = object_of(value) or {}
    return usage_of(
        input_tokens=uncached(counts.get("input_tokens"), counts.get("cached_input_tokens")),
        output_tokens=counts.get("output_tokens"),
        cache_read=counts.get("cached_input_tokens"),
    )
