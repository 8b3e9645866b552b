"""Split a byte stream into lines in bounded memory, whatever the chunking.

A line longer than ``piece_limit`` bytes is cut into pieces at every
``piece_limit`` bytes from its start, so the pieces (and everything decided
from them) depend only on the stream's content, never on where its chunks
happened to be split.
"""

from __future__ import annotations

from typing import Protocol


class LineSink(Protocol):
    """Receives what a :class:`LineAssembler` cut from the stream."""

    def lines(self, block: bytes) -> None:
        """A run of complete lines, each ending in a newline and none over the piece limit."""

    def piece(self, data: bytes, *, continuation: bool, line_end: bool) -> None:
        """One piece of a line: ``continuation`` when it is not the line's first piece,
        ``line_end`` when it is the line's last one."""


class LineAssembler:
    """Feeds a :class:`LineSink` from arbitrary chunks, holding at most one piece."""

    def __init__(self, sink: LineSink, *, piece_limit: int) -> None:
        self._sink = sink
        self._limit = piece_limit
        self._carry = bytearray()
        self._in_long_line = False

    def feed(self, data: bytes) -> None:
        for start in range(0, len(data), self._limit):
            self._feed_block(data[start : start + self._limit])

    def close(self) -> None:
        """Flush a last line that had no newline."""
        if self._carry or self._in_long_line:
            self._emit(bytes(self._carry), line_end=True)
            self._carry.clear()

    def _feed_block(self, block: bytes) -> None:
        first_newline = block.find(b"\n")
        if first_newline < 0:
            self._carry += block
            self._cut_full_pieces()
            return
        self._carry += block[: first_newline + 1]
        self._cut_full_pieces()
        if self._carry:
            self._emit(bytes(self._carry), line_end=True)
            self._carry.clear()
        last_newline = block.rfind(b"\n")
        if last_newline > first_newline:
            self._sink.lines(block[first_newline + 1 : last_newline + 1])
        self._carry += block[last_newline + 1 :]
        self._cut_full_pieces()

    def _cut_full_pieces(self) -> None:
        # A piece that ends exactly at its line's newline is that line's last piece.
        while len(self._carry) > self._limit or (
            len(self._carry) == self._limit and not self._carry.endswith(b"\n")
        ):
            piece = bytes(self._carry[: self._limit])
            del self._carry[: self._limit]
            self._emit(piece, line_end=False)

    def _emit(self, data: bytes, *, line_end: bool) -> None:
        continuation = self._in_long_line
        self._in_long_line = not line_end
        if not continuation and line_end and len(data) <= self._limit and data.endswith(b"\n"):
            self._sink.lines(data)
        else:
            self._sink.piece(data, continuation=continuation, line_end=line_end)
