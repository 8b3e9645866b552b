"""The log that `agentjobs report` and `agentjobs grade` read: a file or standard input,
in one of the transcript formats, fed to a streaming reader in chunks."""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO, Protocol

from agentjobs.contract.text import agent_text
from agentjobs.models.contract import TranscriptFormat

READ_CHUNK = 1024 * 1024


class StreamingReader(Protocol):
    def feed(self, chunk: bytes) -> None: ...


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=[f.value for f in TranscriptFormat],
        default="text",
        help="how the log is laid out (default: text)",
    )


def add_log_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        nargs="?",
        default="-",
        metavar="LOG",
        help="the log file, or - for standard input (default)",
    )


def feed(log: str, reader: StreamingReader) -> None:
    """Feed the file ``log`` (``-``: standard input) to ``reader``, a chunk at a time."""
    if log == "-":
        _feed_from(sys.stdin.buffer, reader)
    else:
        with open(log, "rb") as source:
            _feed_from(source, reader)


def unexpected(error: Exception) -> int:
    """An error nobody expected while reading: one line naming it, not a traceback (the
    reader is built to take any input; what escapes it is a bug to report with that line)."""
    detail = agent_text.clean(f"{type(error).__name__}: {error}")
    print(f"agentjobs: error: the log could not be read: {detail}", file=sys.stderr)
    return 2


def _feed_from(source: BinaryIO, reader: StreamingReader) -> None:
    while chunk := source.read(READ_CHUNK):
        reader.feed(chunk)
