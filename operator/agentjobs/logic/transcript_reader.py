"""The streaming reader of an agent container's log: feed bytes, ask for the verdict.

:class:`TranscriptReader` is what the operator and the CLI use. It reads a
``text`` log directly (R1-R12) or, for ``jsonl``, first takes the assistant's
text out of each event (R13) and reads that. Memory stays bounded whatever
the input: a line piece, one open report body, the tail of the last message.

Decisions where the contract is silent:

- In ``jsonl``, a line that is not a JSON object is read as text (R13); an
  event line longer than ``EVENT_LINE_LIMIT`` is skipped with a warning, since
  it cannot be parsed in bounded memory (tool output, not assistant text).
- In ``jsonl``, the terminal ``result`` event's text is read for reports only
  when it differs from the last assistant message, which it usually repeats;
  a report is never counted twice.
- In ``jsonl``, the last message (R13a) is the text, without report lines,
  of the last assistant message (or terminal result) that had any.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from agentjobs.logic import lines, report_reader, transcript_events
from agentjobs.models.contract import Report, TranscriptFormat

EVENT_LINE_LIMIT = 8 * 1024 * 1024


@dataclass(frozen=True)
class ReaderVerdict:
    """What a log says so far: the standing report and the last message (R10-R13a)."""

    report: Report
    last_message: str | None
    terminal_event_seen: bool


class _EventLines:
    """Line sink for ``jsonl``: turns events into text for the text reader."""

    def __init__(self, text_reader: report_reader.TextReportReader) -> None:
        self._text_reader = text_reader
        self._text_input = lines.LineAssembler(
            text_reader, piece_limit=report_reader.LINE_PIECE_LIMIT
        )
        self.terminal_event_seen = False
        self.last_message: str | None = None
        self._last_assistant_text: str | None = None
        self._skipping_event = False
        self.skipped_events = 0

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
            self._skipping_event = data.lstrip().startswith(b"{")
            if self._skipping_event:
                self.skipped_events += 1
                return
        if not self._skipping_event:
            self._text_input.feed(data)

    def close(self) -> None:
        self._text_input.close()

    def _line(self, line: bytes) -> None:
        stripped = line.strip()
        if not stripped.startswith(b"{"):
            self._text_input.feed(line)
            return
        try:
            event = json.loads(stripped)
        except (ValueError, RecursionError):
            self._text_input.feed(line)
            return
        self._event(transcript_events.classify_event(event))

    def _event(self, event: transcript_events.TranscriptEvent) -> None:
        kind = event.kind
        if kind is transcript_events.EventKind.TERMINAL:
            self.terminal_event_seen = True
            if event.text is None or event.text == self._last_assistant_text:
                return
        elif kind is not transcript_events.EventKind.ASSISTANT_MESSAGE or event.text is None:
            return
        self._last_assistant_text = event.text
        self._text_input.close()  # a message starts on a fresh line
        self._text_reader.begin_message()
        text = event.text if event.text.endswith("\n") else event.text + "\n"
        self._text_input.feed(text.encode("utf-8", errors="replace"))
        message_prose = self._text_reader.end_message()
        if message_prose is not None:
            self.last_message = message_prose


class TranscriptReader:
    """Feed an agent's log in chunks of any size; ask for the verdict at any time."""

    def __init__(self, transcript_format: TranscriptFormat = TranscriptFormat.TEXT) -> None:
        self._format = transcript_format
        self._text_reader = report_reader.TextReportReader()
        self._events: _EventLines | None = None
        sink: lines.LineSink = self._text_reader
        piece_limit = report_reader.LINE_PIECE_LIMIT
        if transcript_format is TranscriptFormat.JSONL:
            self._events = _EventLines(self._text_reader)
            sink, piece_limit = self._events, EVENT_LINE_LIMIT
        self._input = lines.LineAssembler(sink, piece_limit=piece_limit)
        self._closed = False

    def feed(self, chunk: bytes) -> None:
        if self._closed:
            raise ValueError("the reader was closed: no more bytes can be fed")
        self._input.feed(chunk)

    @property
    def reports_seen(self) -> int:
        """How many reports have been closed so far (cheap: for live progress)."""
        return self._text_reader.reports_closed

    def standing_report(self) -> Report:
        """The strongest report closed so far, without ending the stream."""
        return self._text_reader.report()

    def close(self) -> ReaderVerdict:
        """End of stream: the final verdict (an open report is unreadable, R3)."""
        if not self._closed:
            self._input.close()
            if self._events is not None:
                self._events.close()
            self._text_reader.close()
            self._closed = True
        return self._verdict()

    def verdict(self) -> ReaderVerdict:
        """The verdict if the stream ended now, leaving this reader able to go on."""
        if self._closed:
            return self._verdict()
        return copy.deepcopy(self).close()

    def _verdict(self) -> ReaderVerdict:
        report = self._text_reader.report()
        if self._events is None:
            return ReaderVerdict(report, self._text_reader.last_paragraph(), False)
        if self._events.skipped_events:
            note = (
                f"{self._events.skipped_events} transcript lines over "
                f"{EVENT_LINE_LIMIT} bytes were skipped"
            )
            report = report.model_copy(update={"warnings": [*report.warnings, note]})
        return ReaderVerdict(report, self._events.last_message, self._events.terminal_event_seen)
