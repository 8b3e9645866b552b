"""R13: the generic shape, and what ``jsonl`` reads before it recognises a CLI.

``{"type": "message", "role": "assistant", "content": str | [blocks]}``,
Claude Code style ``{"type": "assistant", "message": {"content": [...]}}``,
and the terminal ``{"type": "result", "result": ...}``. Any other event
carries no words of the agent.
"""

from __future__ import annotations

from agentjobs.contract.reading.transcripts.meaning import (
    NOTHING,
    AgentText,
    EventMeaning,
    JsonObject,
    Terminal,
    object_of,
    text_of,
    type_of,
)


def text_blocks(content: object, message: str | None = None) -> tuple[AgentText, ...]:
    """The ``text`` blocks of a message's content (a plain string is one block), as pieces
    of ``message``."""
    if isinstance(content, str):
        return (AgentText(content, message),)
    if not isinstance(content, list):
        return ()
    return tuple(
        AgentText(block["text"], message)
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    )


class GenericDecoder:
    def decode(self, event: JsonObject) -> EventMeaning:
        event_type = type_of(event)
        if event_type == "result":
            return EventMeaning(terminal=Terminal(text=text_of(event.get("result"))))
        if event_type == "assistant":
            message = object_of(event.get("message"))
            if message is not None:
                return _one_message(text_blocks(message.get("content")))
        if event_type == "message" and event.get("role") == "assistant":
            return _one_message(text_blocks(event.get("content")))
        return NOTHING


def _one_message(blocks: tuple[AgentText, ...]) -> EventMeaning:
    """Every block of one event as one message, as the generic shape has no message ids."""
    if len(blocks) <= 1:
        return EventMeaning(texts=blocks)
    return EventMeaning(texts=(AgentText("\n".join(block.text for block in blocks)),))
