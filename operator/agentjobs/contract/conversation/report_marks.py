"""Where a text holds a ``TASK_RESULT`` block, and what the reader makes of it (R72).

Each block (from its marker line to its ``TASK_RESULT_END``, the next marker
or the end of the text) is read by the operator's own reader on its own, so
the mark says what the verdict would say of that block: ``success``,
``failure`` or ``unreadable``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjobs.contract.reading import report_body
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import ReportState

_MARKER = report_body.TASK_RESULT.marker.decode()
_TERMINATOR = report_body.TASK_RESULT.terminator


@dataclass(frozen=True)
class Segment:
    text: str
    report: ReportState | None = None  # the block's state; None for prose


def segments(text: str) -> list[Segment]:
    """``text`` as prose and report blocks, in order; prose only when it has no marker."""
    if _MARKER not in text:
        return [Segment(text)]
    found: list[Segment] = []
    prose: list[str] = []
    block: list[str] | None = None
    for line in text.split("\n"):
        starts = line.lstrip(" \t\ufeff").startswith(_MARKER)
        if block is not None and starts:
            found.append(_block(block))
            block = None
        if block is None and not starts:
            prose.append(line)
            continue
        if block is None:
            if prose:
                found.append(Segment("\n".join(prose)))
                prose = []
            block = []
        block.append(line)
        if line.strip() == _TERMINATOR:
            found.append(_block(block))
            block = None
    if block is not None:
        found.append(_block(block))
    if prose:
        found.append(Segment("\n".join(prose)))
    return found


def _block(lines: list[str]) -> Segment:
    text = "\n".join(lines)
    reader = TranscriptReader()
    reader.feed(text.encode() + b"\n")
    return Segment(text, reader.close().report.state)
