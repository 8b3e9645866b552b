"""A container's log as the API serves it with ``timestamps=true``, back to the bytes the
container wrote (R76).

The kubelet puts its timestamp and a space before every line of the log (RFC 3339 with
nine fraction digits, ``Z`` or an offset). A line the container wrote always has one;
text the kubelet adds does not: once a kubelet (1.35 does) has begun its
answer, it writes a failed read's error into the answer's body under status 200, where
it would otherwise read as the container's last words. Any line that does not begin
with a timestamp ends the reading with :class:`NotALogLine`.

Removing each timestamp gives exactly the bytes the same request without timestamps
gives: the kubelet adds one only where a line begins, so a line written in pieces (a
partial one) keeps a single timestamp. An error written right after a partial last
line, with no line break between, cannot be told from the line's end; a log whose last
line ends with a line break is proven up to its last byte.
"""

from __future__ import annotations

import re

# RFC3339NanoFixed, as the kubelet writes it, and the space after it.
TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(?:Z|[+-]\d\d:\d\d) ")
LONGEST = len(b"2006-01-02T15:04:05.000000000+07:00 ")
SHOWN = 200


class NotALogLine(ValueError):
    """A line of the answer does not begin with the kubelet's timestamp."""

    def __init__(self, text: bytes) -> None:
        shown = text[:SHOWN].decode("utf-8", errors="replace")
        super().__init__(f"the node answered with text that is not a log line: {shown!r}")


class TimestampedLog:
    """Feed the answer's chunks as they come; each call gives the log bytes they complete."""

    def __init__(self) -> None:
        self._line_start = True
        self._pending = b""  # the start of a line whose timestamp has not all arrived

    def feed(self, chunk: bytes) -> bytes:
        data = self._pending + chunk if self._pending else chunk
        self._pending = b""
        pieces: list[bytes] = []
        position = 0
        while position < len(data):
            if self._line_start:
                stamp = TIMESTAMP.match(data, position)
                if stamp is None:
                    if len(data) - position >= LONGEST:
                        raise NotALogLine(data[position:])
                    self._pending = data[position:]
                    break
                position = stamp.end()
                self._line_start = False
            end = data.find(b"\n", position)
            if end < 0:
                pieces.append(data[position:])
                break
            pieces.append(data[position : end + 1])
            position = end + 1
            self._line_start = True
        return b"".join(pieces)

    def close(self) -> None:
        """The answer has ended: a line begun without a whole timestamp was not the log's."""
        if self._pending:
            raise NotALogLine(self._pending)
