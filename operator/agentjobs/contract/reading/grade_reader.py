"""R39: a grader's log read as a stream for its ``GRADE_RESULT`` block.

The same machinery as an agent's log
(:class:`~agentjobs.contract.reading.transcript_reader.BlockTranscriptReader`): every
transcript format, the grader's words only (R13c), bounded memory, any
chunking giving the same grade (R12).

Decision where the contract is silent: the evaluation's usage is the
block's own ``usage`` when it gives one (the grader's statement of what it
spent), else what its agent CLI's transcript reported (R13f).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from agentjobs.contract.reading import grade_body
from agentjobs.contract.reading.transcript_reader import BlockTranscriptReader
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import Grade, SystemFailure, TranscriptFormat, Usage


@dataclass(frozen=True)
class GradeVerdict:
    """What a grader's log says: its standing grade, whether its CLI's terminal event came
    (R13d), the CLI's own verdict that its run failed (R13e) and the evaluation's usage."""

    grade: Grade
    terminal_event_seen: bool
    grader_cli_error: SystemFailure | None
    usage: Usage | None


class GradeReader(BlockTranscriptReader[Grade]):
    """Feed a grader's log in chunks of any size; ask for its grade at any time."""

    def __init__(self, transcript_format: TranscriptFormat = TranscriptFormat.TEXT) -> None:
        super().__init__(grade_body.GRADE_RESULT, transcript_format)

    def close(self) -> GradeVerdict:
        """End of stream: the final grade (an open block is unreadable, R3)."""
        self._close_stream()
        return self._verdict()

    def verdict(self) -> GradeVerdict:
        """The grade if the stream ended now, leaving this reader able to go on."""
        if self._closed:
            return self._verdict()
        return copy.deepcopy(self).close()

    def _verdict(self) -> GradeVerdict:
        grade = self._text_reader.standing()
        facts = self._cleaned_facts()
        if facts.warnings:
            grade = grade.model_copy(update={"warnings": [*grade.warnings, *facts.warnings]})
        spent = grade.usage if grade.usage is not None else facts.usage
        grade = agent_text.cleaned(grade)
        return GradeVerdict(grade, facts.terminal_event_seen, facts.agent_cli_error, spent)
