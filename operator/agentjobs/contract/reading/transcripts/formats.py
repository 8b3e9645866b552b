"""R13b: the decoder for each transcript format, and ``jsonl``'s recognition of the CLI.

``jsonl`` reads with the generic decoder until an event that only one CLI
prints (its first identifying event); from that event on, that CLI's
decoder reads the rest of the stream.
"""

from __future__ import annotations

from collections.abc import Callable

from agentjobs.contract.reading.transcripts import claude_code, codex, gemini_cli, generic, opencode
from agentjobs.contract.reading.transcripts.meaning import Decoder, EventMeaning, JsonObject
from agentjobs.models.contract import TranscriptFormat

_DECODERS: dict[TranscriptFormat, Callable[[], Decoder]] = {
    TranscriptFormat.CLAUDE_CODE: claude_code.ClaudeCodeDecoder,
    TranscriptFormat.CODEX: codex.CodexDecoder,
    TranscriptFormat.GEMINI_CLI: gemini_cli.GeminiCliDecoder,
    TranscriptFormat.OPENCODE: opencode.OpenCodeDecoder,
}
# Most specific first: OpenCode's events carry a ``part``, Codex's have their own types,
# Gemini CLI's ``init``/``stats`` and Claude Code's ``system``/``assistant`` do not overlap.
_RECOGNISED: tuple[tuple[Callable[[JsonObject], bool], TranscriptFormat], ...] = (
    (opencode.identifies, TranscriptFormat.OPENCODE),
    (codex.identifies, TranscriptFormat.CODEX),
    (gemini_cli.identifies, TranscriptFormat.GEMINI_CLI),
    (claude_code.identifies, TranscriptFormat.CLAUDE_CODE),
)


class RecognisingDecoder:
    """``jsonl``: generic until the stream shows which CLI printed it."""

    def __init__(self) -> None:
        self._decoder: Decoder = generic.GenericDecoder()
        self.recognised: TranscriptFormat | None = None

    def decode(self, event: JsonObject) -> EventMeaning:
        if self.recognised is None:
            for identifies, transcript_format in _RECOGNISED:
                if identifies(event):
                    self.recognised = transcript_format
                    self._decoder = _DECODERS[transcript_format]()
                    break
        return self._decoder.decode(event)


def decoder_for(transcript_format: TranscriptFormat) -> Decoder:
    """A fresh decoder for an event format (``text`` has none)."""
    if transcript_format is TranscriptFormat.TEXT:
        raise ValueError("a text transcript has no events to decode")
    if transcript_format is TranscriptFormat.JSONL:
        return RecognisingDecoder()
    return _DECODERS[transcript_format]()


def has_events(transcript_format: TranscriptFormat) -> bool:
    """R14: every format but ``text`` is made of events and needs its terminal event."""
    return transcript_format is not TranscriptFormat.TEXT
