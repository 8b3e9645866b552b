"""The streaming reader of an agent container's log: feed bytes, ask for the verdict.

:class:`TranscriptReader` is what the operator and the CLI use. It reads a
``text`` log directly (R1-R12) or, for an event format (``jsonl`` and the
agent CLIs', R13b), first takes the agent's own words out of each event
(R13c) and reads those. Memory stays bounded whatever the input: a line
piece, one open report body, the tail of the last message.

Decisions where the contract is silent:

- In an event format, a line that is not a JSON object is read as text
  (R13); an event line longer than ``EVENT_LINE_LIMIT`` is skipped with a
  warning, since it cannot be parsed in bounded memory (tool output, not
  the agent's text).
- In an event format, the last message (R13a) is the text, without report
  lines, of the last message of the agent (or terminal event text) that
  had any.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from agentjobs.logic import lines, report_reader
from agentjobs.logic.transcripts import cli_error, formats
from agentjobs.logic.transcripts.event_lines import EventLines
from agentjobs.models.contract import Report, SystemFailure, TranscriptFormat, Usage

EVENT_LINE_LIMIT = 8 * 1024 * 1024


@dataclass(frozen=True)
class ReaderVerdict:
    """What a log says so far: the standing report and the last message (R10-R13a), and
    for an agent CLI its own verdict on the run, classified (R13e), and its usage (R13f)."""

    report: Report
    last_message: str | None
    terminal_event_seen: bool
    agent_cli_error: SystemFailure | None = None
    usage: Usage | None = None


class TranscriptReader:
    """Feed an agent's log in chunks of any size; ask for the verdict at any time."""

    def __init__(self, transcript_format: TranscriptFormat = TranscriptFormat.TEXT) -> None:
        self._format = transcript_format
        self._text_reader = report_reader.TextReportReader()
        self._events: EventLines | None = None
        sink: lines.LineSink = self._text_reader
        piece_limit = report_reader.LINE_PIECE_LIMIT
        if formats.has_events(transcript_format):
            self._events = EventLines(self._text_reader, formats.decoder_for(transcript_format))
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
        events = self._events
        error = cli_error.classify(events.cli_error) if events.cli_error is not None else None
        return ReaderVerdict(
            report, events.last_message, events.terminal_event_seen, error, events.usage
        )
