"""A transcript's lines, fed in order, as the entries of a conversation (R72).

The agent's words, the run's end and the CLI's own error come from the
decoder the operator reads the verdict with (``formats.decoder_for``), so the
console never shows other words than the verdict was read from; tools,
reasoning and prompts come from ``tools``. A tool's result fills in the call
it answers (when the call was on the same page); pieces of one message (a
Gemini CLI delta, a Claude Code block of the same message id) make one entry.
An entry changed or added since :meth:`Conversation.changes` was last asked
is reported once, so a live view sends only what moved.
"""

from __future__ import annotations

import dataclasses
import json

from agentjobs.contract.conversation import tools
from agentjobs.contract.conversation.entries import Entry, Kind
from agentjobs.contract.reading.transcripts import formats
from agentjobs.contract.reading.transcripts.meaning import AgentText, Decoder, EventMeaning
from agentjobs.contract.text import ansi
from agentjobs.models.contract import TranscriptFormat

TEXT_KEPT = 64 * 1024  # of one entry's text, a tool's input or its output


def cut(text: str) -> str:
    """``text``, or its first ``TEXT_KEPT`` characters and how much more there was."""
    if len(text) <= TEXT_KEPT:
        return text
    return f"{text[:TEXT_KEPT]}\n… {len(text) - TEXT_KEPT} more characters in the transcript"


class Conversation:
    def __init__(self, transcript_format: TranscriptFormat) -> None:
        self._format = transcript_format
        self._decoder: Decoder | None = None
        if formats.has_events(transcript_format):
            self._decoder = formats.decoder_for(transcript_format)
        self.entries: list[Entry] = []
        self._tools: dict[str, int] = {}  # an open tool call's key: its entry's index
        self._changed: set[int] = set()

    def add_line(self, line: bytes, offset: int) -> None:
        """One transcript line (its newline optional), which starts at byte ``offset``."""
        text = ansi.strip_ansi(line).decode("utf-8", "replace").rstrip("\r\n")
        event = _event(text) if self._decoder is not None else None
        if event is None or self._decoder is None:
            self._text(text, offset)
            return
        meaning = self._decoder.decode(event)
        if meaning.run_continues:
            self._end_taken_back()
        for piece in meaning.texts:
            self._words(piece, offset)
        for found in tools.found_in(self._events_format(), event, offset):
            if isinstance(found, tools.ToolResult):
                self._result(found, offset)
            else:
                self._call(found)
        if meaning.terminal is not None:
            self._end(meaning, offset)

    def note(self, text: str, offset: int) -> None:
        """Something about the transcript itself at ``offset`` (a line not shown)."""
        self._add(Entry(Kind.NOTE, offset, text=text))

    def changes(self) -> list[tuple[int, Entry]]:
        """The entries added or changed since the last call, by index, in order."""
        changed = sorted(self._changed)
        self._changed.clear()
        return [(index, self.entries[index]) for index in changed]

    def _events_format(self) -> TranscriptFormat:
        """``jsonl``'s CLI once the decoder has recognised it."""
        if isinstance(self._decoder, formats.RecognisingDecoder):
            return self._decoder.recognised or TranscriptFormat.JSONL
        return self._format

    def _add(self, entry: Entry) -> None:
        entry = dataclasses.replace(entry, text=cut(entry.text), input=cut(entry.input))
        self.entries.append(entry)
        index = len(self.entries) - 1
        self._changed.add(index)
        if entry.kind is Kind.TOOL and entry.key is not None:
            self._tools[entry.key] = index

    def _call(self, entry: Entry) -> None:
        """A new entry; a tool call already open under its key (Codex: started, then
        completed) is updated where it stands."""
        index = self._tools.get(entry.key) if entry.kind is Kind.TOOL and entry.key else None
        if index is None:
            self._add(entry)
        else:
            started = self.entries[index].offset
            self._replace(index, dataclasses.replace(entry, offset=started, input=cut(entry.input)))

    def _replace(self, index: int, entry: Entry) -> None:
        self.entries[index] = entry
        self._changed.add(index)

    def _text(self, text: str, offset: int) -> None:
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind is Kind.TEXT and len(last.text) < TEXT_KEPT:
            self._replace(
                len(self.entries) - 1, dataclasses.replace(last, text=f"{last.text}\n{text}")
            )
        else:
            self._add(Entry(Kind.TEXT, offset, text=text))

    def _words(self, piece: AgentText, offset: int) -> None:
        last = self.entries[-1] if self.entries else None
        if (
            last is not None
            and last.kind is Kind.WORDS
            and piece.message is not None
            and last.key == piece.message
        ):
            joined = last.text + piece.text if piece.delta else f"{last.text}\n{piece.text}"
            self._replace(len(self.entries) - 1, dataclasses.replace(last, text=cut(joined)))
        else:
            self._add(Entry(Kind.WORDS, offset, text=piece.text, key=piece.message))

    def _result(self, result: tools.ToolResult, offset: int) -> None:
        index = self._tools.pop(result.key, None)
        if index is None:  # its call was on an earlier page
            entry = Entry(Kind.TOOL, offset, title="tool output", key=result.key or None)
            self._add(dataclasses.replace(entry, output=cut(result.output), failed=result.failed))
            return
        call = self.entries[index]
        self._replace(
            index, dataclasses.replace(call, output=cut(result.output), failed=result.failed)
        )

    def _end(self, meaning: EventMeaning, offset: int) -> None:
        terminal = meaning.terminal
        assert terminal is not None
        self._end_taken_back()  # the reader keeps the last end
        if terminal.error is not None:
            entry = Entry(Kind.END, offset, text=cut(terminal.error.message), failed=True)
        else:
            entry = Entry(Kind.END, offset, text="the run ended", output=cut(terminal.text or ""))
        self._add(entry)

    def _end_taken_back(self) -> None:
        """An end a later event takes back: OpenCode's next step, or a later end."""
        for index in range(len(self.entries) - 1, -1, -1):
            if self.entries[index].kind is Kind.END and not self.entries[index].failed:
                self._replace(index, dataclasses.replace(self.entries[index], text="a step ended"))
                return


def _event(text: str) -> dict[str, object] | None:
    """The JSON object on a line, or None for a line that holds none (read as text, R13)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
