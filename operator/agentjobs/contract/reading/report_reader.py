"""R1-R4, R10-R12, R13a (text) and R39: find and read blocks in a log stream.

:class:`TextBlockReader` is fed lines by a :class:`~agentjobs.contract.text.lines.LineAssembler`
and keeps, at any time, at most one open block body (``BODY_LIMIT``), the
tail of the log's prose (``LAST_MESSAGE_LIMIT``) and the strongest block
closed so far (R11, R39); never the log itself. Which block it reads
(``TASK_RESULT`` reports, ``GRADE_RESULT`` grades) is its
:class:`~agentjobs.contract.text.blocks.BlockKind`; the framing below is the same
for every kind, and "report" below stands for any block.

Decisions taken where the contract is silent (each one keeps the verdict a
function of the log's content alone, R12):

- The JSON value starts at the first non-blank character after the marker.
  A value that does not start with ``{`` is unreadable at once; the rest of
  its line belongs to the report and the next line is read as prose.
- JSON strings cannot hold a raw newline, so a line that ends inside a
  string makes the report unreadable there.
- After the value ends, the rest of its line must be blank (or, in a fenced
  body, the closing fence); then the next line must be the terminator (or
  the closing fence and then the terminator). A line that breaks this
  closes the report as unreadable and is then read again as a line of its own.
- A body over ``BODY_LIMIT`` bytes, or a report line over the line-piece
  limit, makes the report unreadable; the lines after it still belong to
  the report until a terminator or a new marker.
- A terminator line (``TASK_RESULT_END``) outside any report is ignored, not prose.
- A UTF-8 byte-order mark before a marker is ignored like a leading space.
- Report lines are not prose, and a report ends a paragraph: the last
  message is the last run of non-blank prose lines, before or after reports.
"""

from __future__ import annotations

import re
from enum import Enum, auto
from typing import Generic

from agentjobs.contract.text import ansi
from agentjobs.contract.text.blocks import BlockKind, Value

BODY_LIMIT = 1024 * 1024
LAST_MESSAGE_LIMIT = 64 * 1024
LINE_PIECE_LIMIT = BODY_LIMIT + 4096

_LEADING_BLANKS = re.compile(rb"(?:[ \t]|\xef\xbb\xbf)*")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
_JSON_STRUCTURE = re.compile(r'["{}\[\]]')
_STRING_REST = re.compile(r'(?:[^"\\\n]|\\.)*')


class _State(Enum):
    PROSE = auto()
    AWAIT_VALUE = auto()
    IN_VALUE = auto()
    AWAIT_FENCE_CLOSE = auto()
    AWAIT_TERMINATOR = auto()
    SKIP = auto()


class TextBlockReader(Generic[Value]):
    """The block-reading state machine over ANSI-stripped lines of text."""

    def __init__(self, kind: BlockKind[Value]) -> None:
        self._kind = kind
        self._marker = kind.marker
        self._stem = kind.stem_pattern
        self._terminator = kind.terminator
        self._terminator_bytes = kind.terminator.encode()
        self._state = _State.PROSE
        self._body: list[str] = []
        self._body_size = 0
        self._fenced = False
        self._depth = 0
        self._body_warnings: list[str] = []
        self._prose = bytearray()
        self._message_prose: bytearray | None = None
        self._strongest: Value | None = None
        self._counts: dict[str, int] = {}
        self._strengths: dict[str, int] = {}

    # -- LineSink ---------------------------------------------------------

    def lines(self, block: bytes) -> None:
        position = 0
        size = len(block)
        while position < size:
            if self._state is _State.PROSE or self._state is _State.SKIP:
                # Fast path: only a line holding the marker's stem (perhaps cut by an
                # escape sequence) can change anything; every other line is prose.
                hit = self._stem.search(block, position)
                if hit is None:
                    if self._state is _State.PROSE:
                        self._add_prose(block[position:] if position else block)
                    return
                newline = block.rfind(b"\n", position, hit.start())
                line_start = newline + 1 if newline >= 0 else position
                if line_start > position and self._state is _State.PROSE:
                    self._add_prose(block[position:line_start])
                position = line_start
            line_end = block.find(b"\n", position) + 1 or size
            self._line(block[position:line_end], line_end=True)
            position = line_end

    def piece(self, data: bytes, *, continuation: bool, line_end: bool) -> None:
        if not continuation:
            self._line(data, line_end=line_end)
        elif self._state is _State.PROSE:
            self._add_prose(data)
        elif self._state is not _State.SKIP:
            self._close_unreadable(
                f"a {self._kind.noun} line is longer than {LINE_PIECE_LIMIT} bytes",
                then=_State.SKIP,
            )

    # -- messages (jsonl transcripts, R13a) ---------------------------------

    def begin_message(self) -> None:
        self._message_prose = bytearray()

    def end_message(self) -> str | None:
        """The prose of the message that just ended, or None when it had none."""
        prose, self._message_prose = self._message_prose or bytearray(), None
        truncated = len(prose) > LAST_MESSAGE_LIMIT
        tail = ansi.strip_ansi(bytes(prose[-LAST_MESSAGE_LIMIT:]))
        text = _decode_tail(tail, truncated=truncated).strip()
        return text or None

    # -- verdict ----------------------------------------------------------

    def close(self) -> None:
        """End of stream: an open block is unreadable (R3)."""
        if self._state in (_State.PROSE, _State.SKIP):
            return
        if self._state is _State.AWAIT_VALUE:
            reason = f"the stream ended before the {self._kind.noun}'s JSON"
        elif self._state is _State.IN_VALUE:
            reason = f"the stream ended inside the {self._kind.noun}'s JSON"
        else:
            reason = f"the stream ended before {self._terminator}"
        self._close_unreadable(reason, then=_State.PROSE)

    def standing(self) -> Value:
        """R10/R11, R39: the strongest block closed so far (the kind's ``absent`` when none)."""
        if self._strongest is None:
            return self._kind.absent
        total = sum(self._counts.values())
        if total == 1:
            return self._strongest
        by_strength = sorted(self._counts, key=lambda state: -self._strengths[state])
        tally = ", ".join(f"{self._counts[state]} {state}" for state in by_strength)
        note = f"{total} {self._kind.noun}s were written ({tally}); the strongest stands"
        return self._kind.noted(self._strongest, note)

    def last_paragraph(self) -> str | None:
        """R13a (text): the last run of non-blank prose lines, within the prose's last 64 KiB."""
        truncated = len(self._prose) > LAST_MESSAGE_LIMIT
        tail = ansi.strip_ansi(bytes(self._prose[-LAST_MESSAGE_LIMIT:]))
        text = _decode_tail(tail, truncated=truncated)
        paragraph: list[str] = []
        for line in reversed(text.split("\n")):
            if line.strip():
                paragraph.append(line.rstrip("\r"))
            elif paragraph:
                break
        return "\n".join(reversed(paragraph)) if paragraph else None

    # -- the state machine --------------------------------------------------

    def _line(self, raw: bytes, *, line_end: bool) -> None:
        """One line (or a long line's first piece), as it came from the stream."""
        if self._state is _State.PROSE:
            self._prose_line(raw, line_end=line_end)
            return
        text = ansi.strip_ansi(raw)
        if self._is_marker(text):
            if self._state is not _State.SKIP:
                marker, noun = self._marker.decode(), self._kind.noun
                self._close_unreadable(
                    f"a new {marker} marker began before this {noun} ended",
                    then=_State.PROSE,
                )
            self._open_report(text, line_end=line_end)
            return
        if self._state is _State.SKIP:
            if text.strip() == self._terminator_bytes:
                self._state = _State.PROSE
            return
        self._report_line(raw, text, line_end=line_end)

    def _prose_line(self, raw: bytes, *, line_end: bool) -> None:
        text = ansi.strip_ansi(raw)
        if self._is_marker(text):
            self._open_report(text, line_end=line_end)
        elif not (line_end and text.strip() == self._terminator_bytes):
            self._add_prose(raw)

    def _is_marker(self, raw: bytes) -> bool:
        blanks = _LEADING_BLANKS.match(raw)
        start = blanks.end() if blanks else 0
        return raw.startswith(self._marker, start)

    def _open_report(self, text: bytes, *, line_end: bool) -> None:
        blanks = _LEADING_BLANKS.match(text)
        rest = text[(blanks.end() if blanks else 0) + len(self._marker) :]
        self._add_prose(b"\n")  # a report ends the paragraph before it
        self._state = _State.AWAIT_VALUE
        self._body = []
        self._body_size = 0
        self._fenced = False
        self._depth = 0
        self._body_warnings = []
        if line_end:
            self._report_line(rest, rest, line_end=True)
        else:
            self._close_unreadable(
                f"a {self._kind.noun} line is longer than {LINE_PIECE_LIMIT} bytes",
                then=_State.SKIP,
            )

    def _report_line(self, raw: bytes, stripped_bytes: bytes, *, line_end: bool) -> None:
        """A line inside a report: ``raw`` as it came, ``stripped_bytes`` without ANSI (R1)."""
        if not line_end:
            self._close_unreadable(
                f"a {self._kind.noun} line is longer than {LINE_PIECE_LIMIT} bytes",
                then=_State.SKIP,
            )
            return
        text = self._decode_body_line(stripped_bytes)
        stripped = text.strip()
        state = self._state
        if state is _State.AWAIT_TERMINATOR:
            if stripped == self._terminator:
                self._close_readable()
            else:
                self._close_unreadable(
                    f"the line after the JSON is not {self._terminator}", then=_State.PROSE
                )
                self._line(raw, line_end=True)
            return
        if state is _State.AWAIT_FENCE_CLOSE:
            if stripped == "```":
                self._state = _State.AWAIT_TERMINATOR
            else:
                self._close_unreadable(
                    "the code fence around the JSON is not closed", then=_State.PROSE
                )
                self._line(raw, line_end=True)
            return
        if stripped == self._terminator:
            self._close_unreadable(
                f"{self._terminator} came before the JSON was complete", then=_State.PROSE
            )
            return
        self._body_size += len(stripped_bytes)
        if self._body_size > BODY_LIMIT:
            self._close_unreadable(f"the body is over {BODY_LIMIT} bytes", then=_State.SKIP)
            return
        if state is _State.AWAIT_VALUE:
            self._await_value_line(text, stripped)
        else:
            self._scan_value(text, 0)

    def _await_value_line(self, text: str, stripped: str) -> None:
        if not stripped:
            return
        if not self._fenced and _FENCE.fullmatch(stripped):
            self._fenced = True
            self._body_warnings.append(f"the {self._kind.noun}'s JSON was wrapped in a code fence")
            return
        start = len(text) - len(text.lstrip())
        if text[start] != "{":
            self._close_unreadable("the body does not start with a JSON object", then=_State.PROSE)
            return
        self._state = _State.IN_VALUE
        self._scan_value(text, start)

    def _scan_value(self, text: str, position: int) -> None:
        """Follow the JSON's nesting over one line; strings may not cross lines."""
        start = position
        while True:
            match = _JSON_STRUCTURE.search(text, position)
            if match is None:
                self._body.append(text[start:])
                return
            char = match.group()
            position = match.end()
            if char == '"':
                position = _STRING_REST.match(text, position).end()  # type: ignore[union-attr]
                if position >= len(text) or text[position] != '"':
                    self._close_unreadable(
                        "a JSON string runs past the end of its line", then=_State.PROSE
                    )
                    return
                position += 1
            elif char in "{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    self._body.append(text[start:position])
                    self._value_ended(text[position:].strip())
                    return

    def _value_ended(self, rest_of_line: str) -> None:
        if not rest_of_line:
            self._state = _State.AWAIT_FENCE_CLOSE if self._fenced else _State.AWAIT_TERMINATOR
        elif self._fenced and rest_of_line == "```":
            self._state = _State.AWAIT_TERMINATOR
        else:
            self._close_unreadable("text follows the JSON on its line", then=_State.PROSE)

    def _decode_body_line(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            note = f"invalid UTF-8 in the {self._kind.noun} was replaced"
            if note not in self._body_warnings:
                self._body_warnings.append(note)
            return raw.decode("utf-8", errors="replace")

    def _close_readable(self) -> None:
        self._record(self._kind.read_body("".join(self._body), self._body_warnings))
        self._state = _State.PROSE

    def _close_unreadable(self, reason: str, *, then: _State) -> None:
        self._record(self._kind.unreadable(reason, self._body_warnings))
        self._body = []
        self._state = then

    def _record(self, value: Value) -> None:
        state = self._kind.state(value)
        strength = self._kind.strength(value)
        self._counts[state] = self._counts.get(state, 0) + 1
        self._strengths[state] = strength
        if self._strongest is None or strength > self._kind.strength(self._strongest):
            self._strongest = value

    def _add_prose(self, data: bytes) -> None:
        self._prose += data
        if len(self._prose) > 4 * LAST_MESSAGE_LIMIT:
            del self._prose[: -2 * LAST_MESSAGE_LIMIT]
        if self._message_prose is not None:
            self._message_prose += data
            if len(self._message_prose) > 4 * LAST_MESSAGE_LIMIT:
                del self._message_prose[:-LAST_MESSAGE_LIMIT]


def _decode_tail(data: bytes, *, truncated: bool) -> str:
    text = data.decode("utf-8", errors="replace")
    # A cut through a multi-byte character at the window's start is not the agent's text.
    return text.lstrip("\ufffd") if truncated else text
