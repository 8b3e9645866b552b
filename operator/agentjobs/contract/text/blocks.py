"""R1-R4, R12, R39: the kinds of block an agent or a grader ends its log with.

Every block is framed the same way (a ``NAME:`` marker at a line's start, one
JSON value, a ``NAME_END`` line), so one reader
(:class:`~agentjobs.contract.reading.report_reader.TextBlockReader`) finds them all; a
:class:`BlockKind` names the marker and says what a closed body means, which
of two blocks is the stronger (R11, R39) and how to note a tally on the one
that stands.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Value = TypeVar("Value")


@dataclass(frozen=True)
class BlockKind(Generic[Value]):
    """One kind of block: ``TASK_RESULT`` reports, ``GRADE_RESULT`` grades."""

    name: str
    noun: str
    read_body: Callable[[str, list[str]], Value]
    unreadable: Callable[[str, list[str]], Value]
    strength: Callable[[Value], int]
    state: Callable[[Value], str]
    noted: Callable[[Value, str], Value]
    absent: Value

    @property
    def marker(self) -> bytes:
        return f"{self.name}:".encode()

    @property
    def terminator(self) -> str:
        return f"{self.name}_END"

    @property
    def stem_pattern(self) -> re.Pattern[bytes]:
        return _stem_or_cut_stem(self.name)


@functools.cache
def _stem_or_cut_stem(name: str) -> re.Pattern[bytes]:
    """``name``, or any beginning of it directly followed by ESC: an escape sequence cut
    into the stem may hide a marker that R1's stripping reveals."""
    pattern = re.escape(name[-1])
    for char in reversed(name[:-1]):
        pattern = f"{re.escape(char)}(?:{pattern}|\\x1b)"
    return re.compile(pattern.encode())
