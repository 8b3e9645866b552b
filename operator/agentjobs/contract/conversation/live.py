"""A running agent's log, fed in chunks of any size, as a conversation in bounded memory.

Lines are cut as the reader cuts them (``contract/text/lines``); a line longer
than the reader's event line limit is not shown, as the reader skips it too:
the conversation says so where it was, and goes on with the next line.
"""

from __future__ import annotations

from agentjobs.contract.conversation.builder import Conversation
from agentjobs.contract.conversation.entries import Entry
from agentjobs.contract.reading.transcript_reader import EVENT_LINE_LIMIT
from agentjobs.contract.text.lines import LineAssembler
from agentjobs.models.contract import TranscriptFormat


class LiveConversation:
    def __init__(
        self, transcript_format: TranscriptFormat, *, line_limit: int = EVENT_LINE_LIMIT
    ) -> None:
        self.conversation = Conversation(transcript_format)
        self._limit = line_limit
        self._offset = 0
        self._assembler = LineAssembler(self, piece_limit=line_limit)

    def feed(self, chunk: bytes) -> None:
        self._assembler.feed(chunk)

    def close(self) -> None:
        """The log ended: a last line without a newline is a line too."""
        self._assembler.close()

    def changes(self) -> list[tuple[int, Entry]]:
        return self.conversation.changes()

    def lines(self, block: bytes) -> None:
        for line in block.splitlines(keepends=True):
            self.conversation.add_line(line, self._offset)
            self._offset += len(line)

    def piece(self, data: bytes, *, continuation: bool, line_end: bool) -> None:
        if not continuation and line_end:  # a last line without its newline
            self.conversation.add_line(data, self._offset)
        elif not continuation:
            self.conversation.note(
                f"a line of more than {self._limit} bytes is not shown here", self._offset
            )
        self._offset += len(data)
