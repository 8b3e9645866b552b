"""R1: strip ANSI escape sequences from log text before any other rule applies.

Every sequence matched here starts with ESC, contains no other ESC and no
newline, and is at most a few hundred bytes long. That is what lets the
reader strip each line (or each fixed piece of an overlong line) on its own
and still get the same text however the stream was chunked.
"""

from __future__ import annotations

import re

ESC = b"\x1b"

_ANSI_SEQUENCE = re.compile(
    rb"\x1b(?:"
    rb"\[[0-?]{0,64}[ -/]{0,16}[@-~]"  # CSI: colours, cursor movement, erase
    rb"|\][^\x07\x1b\n]{0,512}(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    rb"|[@-Z\\-_]"  # two-byte escapes
    rb")"
)


def strip_ansi(data: bytes) -> bytes:
    """Return ``data`` without its ANSI escape sequences (a cheap no-op when there is no ESC)."""
    if ESC not in data:
        return data
    return _ANSI_SEQUENCE.sub(b"", data)
