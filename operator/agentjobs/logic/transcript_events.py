"""R13: the assistant's text in a ``jsonl`` transcript, from the event shapes we know.

Known shapes:

- Claude Code ``stream-json``: ``{"type": "assistant", "message": {"content": [...]}}``
  with ``{"type": "text", "text": ...}`` blocks, ended by the terminal
  ``{"type": "result", "result": ...}``.
- Generic: ``{"type": "message", "role": "assistant", "content": str | [blocks]}``,
  and the same terminal ``{"type": "result"}`` event.

Any other JSON event carries no assistant text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class EventKind(Enum):
    ASSISTANT_MESSAGE = auto()
    TERMINAL = auto()
    OTHER = auto()


@dataclass(frozen=True)
class TranscriptEvent:
    kind: EventKind
    text: str | None = None


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(texts) if texts else None


def classify_event(event: object) -> TranscriptEvent:
    """What one parsed transcript line means for the report reader."""
    if not isinstance(event, dict):
        return TranscriptEvent(EventKind.OTHER)
    event_type = event.get("type")
    if event_type == "result":
        result = event.get("result")
        return TranscriptEvent(EventKind.TERMINAL, result if isinstance(result, str) else None)
    if event_type == "assistant":
        message = event.get("message")
        if isinstance(message, dict):
            return TranscriptEvent(
                EventKind.ASSISTANT_MESSAGE, _content_text(message.get("content"))
            )
    if event_type == "message" and event.get("role") == "assistant":
        return TranscriptEvent(EventKind.ASSISTANT_MESSAGE, _content_text(event.get("content")))
    return TranscriptEvent(EventKind.OTHER)
