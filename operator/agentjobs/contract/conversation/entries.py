"""The entries a transcript is shown as: the agent's words, its tools, the CLI's own ends.

Entries are plain values, made from one page of a transcript; the console
renders them. ``offset`` is the byte offset of the transcript line an entry
starts at, so a page, a link or a test can point at it whatever came before.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    WORDS = "words"  # the agent's own words (R13c), as the reader reads them
    THINKING = "thinking"  # reasoning the CLI printed: not the agent's words
    TOOL = "tool"  # a tool call, its input and, once known, its output
    PROMPT = "prompt"  # what the CLI was asked
    ERROR = "error"  # an error the CLI printed while it went on
    END = "end"  # the CLI's end of the run (R13d), failed with its own message (R13e)
    NOTE = "note"  # the CLI's start: model, working directory
    TEXT = "text"  # log lines: a text transcript, or a line that is not an event


@dataclass(frozen=True)
class Entry:
    kind: Kind
    offset: int
    text: str = ""
    title: str = ""
    input: str = ""
    output: str | None = None  # a tool's output; None while it has none
    failed: bool = False
    key: str | None = None  # the message or tool call it belongs to

    @property
    def running(self) -> bool:
        """A tool call whose result has not been seen (yet, or on this page)."""
        return self.kind is Kind.TOOL and self.output is None and not self.failed
