"""Claude Code ``--output-format stream-json`` (Amp and Cursor print the same layout).

- Words: ``text`` blocks of ``assistant`` events. Each block may arrive as an
  event of its own, so blocks are one message per ``message.id``. A
  subagent's events (``parent_tool_use_id`` set) reach the agent as a tool's
  output: they are not its words.
- End: ``result``. It failed when ``is_error`` is true, whatever its
  ``subtype`` (the auth failure says ``success``), or when its subtype is an
  ``error_*`` one; the message is in ``result`` (Claude Code) or ``error``
  (Amp).
- Usage: live, each ``assistant`` message's ``message.usage`` once per
  ``message.id`` (a message split over several events repeats it; a subagent's
  messages are spent too), on its ``message.model``. Claude Code prints a
  message's usage as the message starts, so its output tokens are counted in
  full only by the ``result``, whose totals (and ``total_cost_usd``) replace the
  running sum.
- Turns: each new ``message.id`` of the agent's own (not a subagent's).
"""

from __future__ import annotations

from agentjobs.contract.reading.transcripts.generic import text_blocks
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
from agentjobs.contract.text import usage as usage_sums
from agentjobs.contract.text.usage import Spend

MAX_TURNS_SUBTYPE = "error_max_turns"


def identifies(event: JsonObject) -> bool:
    """The events only this layout prints: its ``system`` events and ``assistant`` messages."""
    event_type = type_of(event)
    if event_type == "system":
        return True
    if event_type == "assistant":
        return object_of(event.get("message")) is not None
    return event_type == "result" and ("is_error" in event or "subtype" in event)


class ClaudeCodeDecoder:
    def __init__(self) -> None:
        self._message_id: str | None = None
        self._message_usage: Spend | None = None  # what the open message has counted
        self._message_raw: dict[str, object] = {}  # its usage as last printed
        self._turn_id: str | None = None  # the agent's own last message

    def decode(self, event: JsonObject) -> EventMeaning:
        event_type = type_of(event)
        if event_type == "assistant":
            return self._assistant(event)
        if event_type == "result":
            return _result(event)
        return NOTHING

    def _assistant(self, event: JsonObject) -> EventMeaning:
        message = object_of(event.get("message"))
        if message is None:
            return NOTHING
        message_id = text_of(message.get("id"))
        spent = self._spent(message_id, message.get("usage"))
        model = text_of(message.get("model"))
        if text_of(event.get("parent_tool_use_id")) is not None:  # a subagent's: spent only
            return EventMeaning(usage=spent, model=model)
        fresh = message_id is None or message_id != self._turn_id
        self._turn_id = message_id
        texts = text_blocks(message.get("content"), message_id)
        if message_id is None and len(texts) > 1:  # Cursor: one event, one message
            texts = (AgentText("\n".join(block.text for block in texts)),)
        return EventMeaning(texts=texts, usage=spent, model=model, turns=1 if fresh else 0)

    def _spent(self, message_id: str | None, raw: object) -> Spend | None:
        """What this event adds to the running sum: a new message's usage, or what a
        repeated one's grew by (mostly nothing: each block repeats its message's usage)."""
        counts = object_of(raw) or {}
        same_message = message_id is not None and message_id == self._message_id
        if same_message and counts == self._message_raw:
            return None
        self._message_raw = counts
        now = usage_of(
            input_tokens=counts.get("input_tokens"),
            output_tokens=counts.get("output_tokens"),
            cache_creation=counts.get("cache_creation_input_tokens"),
            cache_read=counts.get("cache_read_input_tokens"),
        )
        if message_id is None or message_id != self._message_id:
            self._message_id, self._message_usage = message_id, now
            return now
        growth = usage_sums.growth(self._message_usage, now)
        self._message_usage = usage_sums.larger(self._message_usage, now)
        return growth


def _result(event: JsonObject) -> EventMeaning:
    subtype = text_of(event.get("subtype")) or ""
    failed = event.get("is_error") is True or subtype.startswith("error")
    error = CliError(_error_message(event, subtype), max_turns=subtype == MAX_TURNS_SUBTYPE)
    usage = object_of(event.get("usage")) or {}
    return EventMeaning(
        terminal=Terminal(text=text_of(event.get("result")), error=error if failed else None),
        usage_total=usage_of(
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            cache_creation=usage.get("cache_creation_input_tokens"),
            cache_read=usage.get("cache_read_input_tokens"),
            cost=event.get("total_cost_usd"),
        ),
    )


def _error_message(event: JsonObject, subtype: str) -> str:
    for value in (event.get("result"), event.get("error")):
        if isinstance(value, str) and value.strip():
            return value
        detail = text_of((object_of(value) or {}).get("message"))
        if detail:
            return detail
    return f"the agent CLI's run ended with {subtype or 'an error'}"
