"""R13-R13f in the stream: event lines in, the agent's words out to the report reader.

Each JSON line goes to the format's decoder; the words it finds are fed, as
they come, to the text report reader, so a message is never held whole: a
message spread over many events (Claude Code blocks of one ``message.id``,
Gemini CLI deltas) costs no more memory than one line of text (R12).

Decisions where the contract is silent:

- A message ends when a piece of another message arrives, at a terminal
  event, at a line that is not JSON, and at the end of the stream.
- A terminal event's final text is read as a message of its own only when
  it is neither the last block nor the last message (it usually repeats
  one), so that a report is never counted twice; only digests of those are
  kept to tell.
- The first CLI error stands; a later terminal event does not take it back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol

from agentjobs.contract.limits.meter import UsageMeter
from agentjobs.contract.reading import report_reader
from agentjobs.contract.reading.transcripts.meaning import (
    AgentText,
    CliError,
    Decoder,
    EventMeaning,
    Terminal,
)
from agentjobs.contract.text import agent_text, lines

_JSON = json.JSONDecoder()


class _RunningDigest:
    """A SHA-256 being computed that ``copy.deepcopy`` (a mid-stream verdict) can copy."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def digest(self) -> bytes:
        return self._hash.digest()

    def __deepcopy__(self, memo: dict[int, Any]) -> _RunningDigest:
        clone = _RunningDigest()
        clone._hash = self._hash.copy()
        return clone


class MessageSink(lines.LineSink, Protocol):
    """The block reader the agent's words go to, told where each message begins and ends."""

    def begin_message(self) -> None: ...

    def end_message(self) -> str | None: ...


def _as_block(text: str) -> bytes:
    """A block's text as it is fed: it ends its line."""
    return agent_text.utf8(text if text.endswith("\n") else text + "\n")


class EventLines:
    """A :class:`~agentjobs.contract.text.lines.LineSink` for event transcripts."""

    def __init__(
        self,
        text_reader: MessageSink,
        decoder: Decoder,
        meter: UsageMeter,
        on_spent: Callable[[], None] | None = None,
    ) -> None:
        self._text_reader = text_reader
        self._decoder = decoder
        self.meter = meter
        self._on_spent = on_spent  # told after each event that spent something (R70)
        self._text_input = lines.LineAssembler(
            text_reader, piece_limit=report_reader.LINE_PIECE_LIMIT
        )
        self._skipping_event = False
        self._message_open = False
        self._message_key: str | None = None
        self._pieces_fed = False
        self._line_open = False  # the open message's text so far does not end its line
        self._message_digest = _RunningDigest()
        self._block_digest: bytes | None = None
        self._recent: frozenset[bytes] = frozenset()
        self.skipped_events = 0
        self.last_message: str | None = None
        self.terminal_event_seen = False
        self.cli_error: CliError | None = None
        self.lines_read = 0  # lines begun, JSON or not: where a limit was passed (R70)

    # -- LineSink ---------------------------------------------------------

    def lines(self, block: bytes) -> None:
        start = 0
        while start < len(block):
            end = block.find(b"\n", start) + 1 or len(block)
            self._line(block[start:end])
            start = end

    def piece(self, data: bytes, *, continuation: bool, line_end: bool) -> None:
        if not continuation:
            if line_end:
                self._line(data)
                return
            self.lines_read += 1
            self._skipping_event = data.lstrip().startswith(b"{")
            if self._skipping_event:
                self.skipped_events += 1
                return
            self._end_message()
        if not self._skipping_event:
            self._text_input.feed(data)

    def close(self) -> None:
        self._end_message()
        self._text_input.close()

    # -- events -------------------------------------------------------------

    def _line(self, line: bytes) -> None:
        self.lines_read += 1
        stripped = line.strip()
        event: object = None
        if stripped.startswith(b"{"):
            try:
                # As json.loads reads UTF-8 bytes, without its guess at other encodings per line.
                event = _JSON.decode(stripped.decode("utf-8", "surrogatepass"))
            except (ValueError, RecursionError):
                event = None
        if not isinstance(event, dict):  # R13: not JSON, so text
            self._end_message()
            self._text_input.feed(line)
            return
        self._event(self._decoder.decode(event))

    def _event(self, meaning: EventMeaning) -> None:
        for text in meaning.texts:
            self._text(text)
        if meaning.usage or meaning.usage_total or meaning.turns or meaning.model:
            self.meter.observe(
                usage=meaning.usage,
                usage_total=meaning.usage_total,
                model=meaning.model,
                turns=meaning.turns,
            )
            if self._on_spent is not None and (
                meaning.usage or meaning.usage_total or meaning.turns
            ):
                self._on_spent()
        if meaning.run_continues:
            self.terminal_event_seen = False
        if meaning.terminal is not None:
            self._terminal(meaning.terminal)

    def _terminal(self, terminal: Terminal) -> None:
        self._end_message()
        self.terminal_event_seen = True
        if self.cli_error is None:
            self.cli_error = terminal.error
        text = terminal.text
        if text is not None and hashlib.sha256(_as_block(text)).digest() not in self._recent:
            self._text(AgentText(text))
            self._end_message()

    # -- messages -------------------------------------------------------------

    def _text(self, text: AgentText) -> None:
        continues = (
            self._message_open and text.message is not None and text.message == self._message_key
        )
        if not continues:
            self._end_message()
            self._begin_message(text.message)
        if not text.delta:
            if self._pieces_fed:  # blocks are joined by a line break, as "\n".join does
                self._feed(b"\n")
                self._line_open = False
            self._block_digest = hashlib.sha256(_as_block(text.text)).digest()
        self._pieces_fed = True
        if text.text:
            self._feed(agent_text.utf8(text.text))
            self._line_open = not text.text.endswith("\n")

    def _begin_message(self, key: str | None) -> None:
        self._text_input.close()  # a message starts on a fresh line
        self._text_reader.begin_message()
        self._message_open = True
        self._message_key = key
        self._message_digest = _RunningDigest()
        self._block_digest = None
        self._pieces_fed = False

    def _end_message(self) -> None:
        if not self._message_open:
            return
        if self._line_open:
            self._feed(b"\n")
            self._line_open = False
        self._text_input.close()
        self._message_open = False
        digests = {self._message_digest.digest()}
        if self._block_digest is not None:
            digests.add(self._block_digest)
        self._recent = frozenset(digests)
        prose = self._text_reader.end_message()
        if prose is not None:
            self.last_message = prose

    def _feed(self, data: bytes) -> None:
        self._text_input.feed(data)
        self._message_digest.update(data)
