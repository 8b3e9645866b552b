"""Container log files: a CRI-style line format that keeps every byte.

Each chunk a process writes becomes one or more entries
`<RFC3339Nano timestamp> <stdout|stderr> <F|P> <content>\n`; `F` marks content
that ended with a newline (stripped in the file), `P` a partial chunk. Serving
the content (plus the newline for `F`) gives back exactly what was written.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO


def format_timestamp(ns: int) -> str:
    """RFC 3339 with nanoseconds, UTC, as the kubelet prints log timestamps."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    base = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{nanos:09d}Z"


def parse_timestamp(text: str) -> int:
    """Nanoseconds since the epoch for an RFC 3339 time (fraction optional)."""
    text = text.strip()
    if text.endswith("Z"):
        text, offset = text[:-1], "+00:00"
    else:
        offset = text[-6:]
        text = text[:-6]
    whole, _, fraction = text.partition(".")
    moment = datetime.fromisoformat(whole + offset)
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    return int(moment.timestamp()) * 1_000_000_000 + nanos


@dataclass(frozen=True)
class LogEntry:
    timestamp: str
    stream: str
    partial: bool
    content: bytes

    @property
    def data(self) -> bytes:
        """The bytes the process wrote for this entry."""
        return self.content if self.partial else self.content + b"\n"

    @property
    def nanos(self) -> int:
        return parse_timestamp(self.timestamp)


def encode_chunk(chunk: bytes, stream: str, timestamp: str) -> bytes:
    """Entries for one chunk read from a stream."""
    out: list[bytes] = []
    prefix = f"{timestamp} {stream} ".encode()
    start = 0
    while start < len(chunk):
        newline = chunk.find(b"\n", start)
        if newline < 0:
            out.append(prefix + b"P " + chunk[start:] + b"\n")
            break
        out.append(prefix + b"F " + chunk[start:newline] + b"\n")
        start = newline + 1
    return b"".join(out)


def decode_line(line: bytes) -> LogEntry:
    """One file line (without its final newline) back into an entry."""
    parts = line.split(b" ", 3)
    parts += [b""] * (4 - len(parts))
    timestamp, stream, tag, content = parts
    return LogEntry(timestamp.decode(), stream.decode(), tag == b"P", content)


def split_entries(data: bytes) -> tuple[list[LogEntry], int]:
    """Complete entries in `data` and how many bytes they used."""
    end = data.rfind(b"\n") + 1
    if end == 0:
        return [], 0
    lines = data[: end - 1].split(b"\n")
    return [decode_line(line) for line in lines], end


# terminationMessagePolicy FallbackToLogsOnError: the kubelet's last lines and bytes of the log.
FALLBACK_LINES = 80
FALLBACK_BYTES = 2048


def log_tail_message(path: Path) -> str | None:
    """A failed container's message from its log, as FallbackToLogsOnError gives it."""
    try:
        with path.open("rb") as log_file:
            offset = max(0, log_file.seek(0, os.SEEK_END) - 64 * FALLBACK_BYTES)
            log_file.seek(offset)
            data = log_file.read()
    except OSError:
        return None
    if offset:  # read from within a line: from the next one on
        data = data[data.find(b"\n") + 1 :]
    entries, _ = split_entries(data)
    text = b"".join(entry.data for entry in tail_entries(entries, FALLBACK_LINES))
    return text[-FALLBACK_BYTES:].decode(errors="replace") or None


@dataclass(frozen=True)
class LogOptions:
    """The kubelet's log query options."""

    follow: bool = False
    timestamps: bool = False
    since_ns: int | None = None
    tail_lines: int | None = None
    limit_bytes: int | None = None


def tail_entries(entries: list[LogEntry], lines: int) -> list[LogEntry]:
    """The entries making up the last `lines` lines (a line ends at an F entry)."""
    groups: list[list[LogEntry]] = []
    current: list[LogEntry] = []
    for entry in entries:
        current.append(entry)
        if not entry.partial:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    kept = groups[len(groups) - lines :] if lines > 0 else []
    return [entry for group in kept for entry in group]


def render(entries: Iterable[LogEntry], options: LogOptions) -> bytes:
    out: list[bytes] = []
    for entry in entries:
        if options.since_ns is not None and entry.nanos < options.since_ns:
            continue
        if options.timestamps:
            out.append(entry.timestamp.encode() + b" " + entry.data)
        else:
            out.append(entry.data)
    return b"".join(out)


class LiveLog:
    """Lets followers of a log wake as soon as bytes are written or it closes."""

    def __init__(self) -> None:
        self.closed = False
        self._changed = asyncio.Event()

    def changed_event(self) -> asyncio.Event:
        return self._changed

    def notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def close(self) -> None:
        self.closed = True
        self.notify()


class LogWriter:
    """Appends a container's stdout/stderr chunks to its log file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.live = LiveLog()
        self._file = path.open("ab", buffering=0)

    def write(self, stream: str, chunk: bytes) -> None:
        if not chunk or self._file.closed:
            return
        self._file.write(encode_chunk(chunk, stream, format_timestamp(time.time_ns())))
        self.live.notify()

    def reopen(self) -> None:
        """Start a new file at the same path, after the old one was renamed (rotation)."""
        if self._file.closed:
            return
        self._file.close()
        self._file = self.path.open("ab", buffering=0)
        self.live.notify()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
        self.live.close()


async def stream_log(path: Path, live: LiveLog | None, options: LogOptions) -> AsyncIterator[bytes]:
    """Yield the log's bytes; with `follow`, keep going until the log closes."""
    remaining = options.limit_bytes

    def limited(data: bytes) -> bytes:
        nonlocal remaining
        if remaining is None:
            return data
        data = data[:remaining]
        remaining -= len(data)
        return data

    log_file = path.open("rb")
    try:
        entries, used = split_entries(log_file.read())
        offset = used
        if options.tail_lines is not None:
            entries = tail_entries(entries, options.tail_lines)
        first = limited(render(entries, options))
        if first:
            yield first
        if not options.follow or live is None:
            return
        while remaining is None or remaining > 0:
            changed = live.changed_event()
            closed = live.closed
            log_file.seek(offset)
            entries, used = split_entries(log_file.read())
            offset += used
            data = limited(render(entries, options))
            if data:
                yield data
            elif _rotated(log_file, path):
                # Drained the renamed file: go on in the new one, as the kubelet's follow
                # reopens the log it was told was recreated (kuberuntime/logs/logs.go).
                log_file.close()
                log_file, offset = path.open("rb"), 0
            elif closed:
                return
            else:
                await changed.wait()
    finally:
        log_file.close()


def _rotated(log_file: BinaryIO, path: Path) -> bool:
    """The file at `path` is no longer the one open: the log was rotated."""
    try:
        return os.stat(path).st_ino != os.fstat(log_file.fileno()).st_ino
    except FileNotFoundError:
        return False
