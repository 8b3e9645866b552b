"""Helpers to read a log through the streaming reader in tests."""

from __future__ import annotations

from collections.abc import Iterable

from agentjobs.contract.reading.transcript_reader import ReaderVerdict, TranscriptReader
from agentjobs.models.contract import TranscriptFormat


def read(
    log: bytes | str, transcript_format: TranscriptFormat = TranscriptFormat.TEXT
) -> ReaderVerdict:
    """Read a whole log in one chunk."""
    data = log.encode() if isinstance(log, str) else log
    return read_chunks([data], transcript_format)


def read_chunks(
    chunks: Iterable[bytes], transcript_format: TranscriptFormat = TranscriptFormat.TEXT
) -> ReaderVerdict:
    reader = TranscriptReader(transcript_format)
    for chunk in chunks:
        reader.feed(chunk)
    return reader.close()


def report_block(body: str) -> str:
    return f"TASK_RESULT: {body}\nTASK_RESULT_END\n"
