"""A transcript read a page at a time, so that a 100 MB one never goes anywhere whole (R72).

A page is the whole lines in a window of the transcript's bytes from a line
start; the next page starts after the last whole line. A line longer than a
window is not shown: the page says so, and the caller finds where the next
line starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjobs.contract.conversation.builder import Conversation
from agentjobs.contract.conversation.entries import Entry, Kind
from agentjobs.models.contract import TranscriptFormat

PAGE_BYTES = 256 * 1024


@dataclass(frozen=True)
class Page:
    entries: list[Entry]
    start: int
    next_start: int | None  # None: the transcript ended on this page
    line_too_long: bool = False  # the window held no line end: the caller skips that line


def read_page(
    transcript_format: TranscriptFormat, window: bytes, *, start: int, at_end: bool
) -> Page:
    """The page in ``window`` (the transcript's bytes from line start ``start``); ``at_end``
    when the window reaches the transcript's end."""
    whole = len(window) if at_end else window.rfind(b"\n") + 1
    if whole == 0 and not at_end:
        note = Entry(
            Kind.NOTE, start, text=f"a line of more than {len(window)} bytes is not shown here"
        )
        return Page([note], start, None, line_too_long=True)
    conversation = Conversation(transcript_format)
    position = 0
    while position < whole:
        end = window.find(b"\n", position, whole)
        end = whole if end < 0 else end + 1
        conversation.add_line(window[position:end], start + position)
        position = end
    return Page(conversation.entries, start, None if at_end else start + whole)
