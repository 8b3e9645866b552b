"""The streaming reader of an agent container's log: feed bytes, ask for the verdict.

:class:`TranscriptReader` is what the operator and the CLI use. It reads a
``text`` log directly (R1-R12) or, for an event format (``jsonl`` and the
agent CLIs', R13b), first takes the agent's own words out of each event
(R13c) and reads those. Memory stays bounded whatever the input: a line
piece, one open report body, the tail of the last message.
:class:`BlockTranscriptReader` is the same machinery for any kind of block;
a grader's log is read through it too (R39, ``contract/reading/grade_reader.py``).

Decisions where the contract is silent:

- In an event format, a line that is not a JSON object is read as text
  (R13); an event line longer than ``EVENT_LINE_LIMIT`` is skipped with a
  warning, since it cannot be parsed in bounded memory (tool output, not
  the agent's text).
- In an event format, the last message (R13a) is the text, without report
  lines, of the last message of the agent (or terminal event text) that
  had any.

Given ``limits`` (and an Execution's ``budget``, R71), the reader checks
them after every event that spends (R70) and keeps the first one passed,
with the line it was passed on, so the check is the same whatever the
chunking.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Generic

from agentjobs.contract.limits import guard
from agentjobs.contract.limits.meter import UsageMeter
from agentjobs.contract.reading import report_body, report_reader
from agentjobs.contract.reading.transcripts import cli_error, formats
from agentjobs.contract.reading.transcripts.event_lines import EventLines
from agentjobs.contract.text import agent_text, lines
from agentjobs.contract.text.blocks import BlockKind, Value
from agentjobs.models.contract import Report, SystemFailure, TranscriptFormat, Usage
from agentjobs.models.limits import ExecutionLimits, PriceTable

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


@dataclass(frozen=True)
class TranscriptFacts:
    """What an event transcript says beside its blocks (R13a, R13d-R13f, R69)."""

    last_message: str | None
    terminal_event_seen: bool
    agent_cli_error: SystemFailure | None
    usage: Usage | None
    warnings: list[str]


@dataclass(frozen=True)
class PassedAt:
    """R70: the first limit the log passed, and the line (from 1) of the event that did."""

    crossing: guard.Crossing
    line: int


class BlockTranscriptReader(Generic[Value]):
    """Feed a log in chunks of any size; read blocks of one kind from it."""

    def __init__(
        self,
        kind: BlockKind[Value],
        transcript_format: TranscriptFormat,
        *,
        prices: PriceTable | None = None,
        limits: ExecutionLimits | None = None,
        budget: guard.Budget | None = None,
    ) -> None:
        self._format = transcript_format
        self._text_reader = report_reader.TextBlockReader(kind)
        self._events: EventLines | None = None
        self._limits = limits
        self._budget = budget
        self._thresholds = guard.thresholds(limits, budget)
        self.limit_passed: PassedAt | None = None
        sink: lines.LineSink = self._text_reader
        piece_limit = report_reader.LINE_PIECE_LIMIT
        if formats.has_events(transcript_format):
            self._events = EventLines(
                self._text_reader,
                formats.decoder_for(transcript_format),
                UsageMeter(prices),
                self._check_limits if limits is not None or budget is not None else None,
            )
            sink, piece_limit = self._events, EVENT_LINE_LIMIT
        self._input = lines.LineAssembler(sink, piece_limit=piece_limit)
        self._closed = False

    def feed(self, chunk: bytes) -> None:
        if self._closed:
            raise ValueError("the reader was closed: no more bytes can be fed")
        self._input.feed(chunk)

    def spent(self) -> guard.Spent:
        """What the log has spent so far (R68, R69); nothing known for ``text``."""
        if self._events is None:
            return guard.Spent()
        meter = self._events.meter
        return guard.Spent(meter.cost, meter.tokens, meter.turns or None)

    @property
    def model(self) -> str | None:
        """The model the log named last (R68), if it is an agent CLI's."""
        return self._events.meter.model if self._events is not None else None

    def _check_limits(self) -> None:
        if self.limit_passed is not None or self._events is None:
            return
        meter = self._events.meter  # this runs after every event that spends: only numbers
        for limit, threshold in self._thresholds:
            if limit is guard.Limit.COST:
                used: Decimal | int | None = meter.cost
            else:
                used = meter.tokens if limit is guard.Limit.TOKENS else meter.turns
            if (used or 0) > threshold:  # nothing known is none used, as guard.passed reads it
                spent = self.spent()
                crossing = guard.passed(self._limits, spent) or guard.over_budget(
                    self._budget, spent
                )
                assert crossing is not None, "a threshold passed is a limit passed"
                self.limit_passed = PassedAt(crossing, self._events.lines_read)
                return

    def standing(self) -> Value:
        """The strongest block closed so far, without ending the stream."""
        return self._text_reader.standing()

    def _close_stream(self) -> None:
        """End of stream: an open block is unreadable (R3)."""
        if not self._closed:
            self._input.close()
            if self._events is not None:
                self._events.close()
            self._text_reader.close()
            self._closed = True

    def _facts(self) -> TranscriptFacts:
        if self._events is None:
            return TranscriptFacts(self._text_reader.last_paragraph(), False, None, None, [])
        events = self._events
        warnings = []
        if events.skipped_events:
            warnings.append(
                f"{events.skipped_events} transcript lines over "
                f"{EVENT_LINE_LIMIT} bytes were skipped"
            )
        warnings.extend(events.meter.warnings())
        error = cli_error.classify(events.cli_error) if events.cli_error is not None else None
        return TranscriptFacts(
            events.last_message,
            events.terminal_event_seen,
            error,
            events.meter.usage,
            warnings,
        )

    def _cleaned_facts(self) -> TranscriptFacts:
        """R56: the facts as they may reach a status, an Event or a terminal."""
        facts = self._facts()
        last = facts.last_message
        error = facts.agent_cli_error
        return TranscriptFacts(
            agent_text.clean(last) if last is not None else None,
            facts.terminal_event_seen,
            agent_text.cleaned(error) if error is not None else None,
            facts.usage,
            facts.warnings,
        )


class TranscriptReader(BlockTranscriptReader[Report]):
    """An agent's log: its ``TASK_RESULT`` report and the run's facts."""

    def __init__(
        self,
        transcript_format: TranscriptFormat = TranscriptFormat.TEXT,
        *,
        prices: PriceTable | None = None,
        limits: ExecutionLimits | None = None,
        budget: guard.Budget | None = None,
    ) -> None:
        super().__init__(
            report_body.TASK_RESULT, transcript_format, prices=prices, limits=limits, budget=budget
        )

    def close(self) -> ReaderVerdict:
        """End of stream: the final verdict (an open report is unreadable, R3)."""
        self._close_stream()
        return self._verdict()

    def verdict(self) -> ReaderVerdict:
        """The verdict if the stream ended now, leaving this reader able to go on."""
        if self._closed:
            return self._verdict()
        return copy.deepcopy(self).close()

    def _verdict(self) -> ReaderVerdict:
        report = self._text_reader.standing()
        facts = self._cleaned_facts()
        if facts.warnings:
            report = report.model_copy(update={"warnings": [*report.warnings, *facts.warnings]})
        return ReaderVerdict(
            agent_text.cleaned(report),
            facts.last_message,
            facts.terminal_event_seen,
            facts.agent_cli_error,
            facts.usage,
        )
