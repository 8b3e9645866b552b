"""Container log rotation, as the kubelet's container log manager does it.

Following pkg/kubelet/logs/container_log_manager.go: every monitor interval,
each running container's log that has reached containerLogMaxSize is rotated:
leftovers of a failed rotation are removed, rotated files beyond
containerLogMaxFiles - 2 go (oldest first), the others are gzipped, the
current file is renamed to `<log>.<YYYYmmdd-HHMMSS>` and the runtime reopens
the log (here: the node itself, being the runtime too). `kubectl logs` reads
only the current file.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from .logs import LogWriter

log = logging.getLogger(__name__)

COMPRESS_SUFFIX = ".gz"
TMP_SUFFIX = ".tmp"
TIMESTAMP_FORMAT = "%Y%m%d-%H%M%S"


def rotated_logs(path: Path) -> list[Path]:
    """The rotated files of a log, oldest first (their names sort by time)."""
    return sorted(path.parent.glob(path.name + ".*"))


def _compress(path: Path) -> None:
    temporary = path.with_name(path.name + COMPRESS_SUFFIX + TMP_SUFFIX)
    with path.open("rb") as source, gzip.open(temporary, "wb") as target:
        shutil.copyfileobj(source, target)
    os.replace(temporary, path.with_name(path.name + COMPRESS_SUFFIX))
    path.unlink()


def rotate(writer: LogWriter, max_files: int, now: float) -> Path:
    """Rotate one container's current log file; returns the rotated file's path."""
    path = writer.path
    logs = []
    for rotated in rotated_logs(path):
        if rotated.name.endswith(TMP_SUFFIX):  # a rotation that did not finish
            rotated.unlink(missing_ok=True)
        else:
            logs.append(rotated)
    excess = max(0, len(logs) - max(max_files - 2, 0))
    for old in logs[:excess]:
        old.unlink(missing_ok=True)
    for kept in logs[excess:]:
        if not kept.name.endswith(COMPRESS_SUFFIX):
            _compress(kept)
    target = path.with_name(f"{path.name}.{time.strftime(TIMESTAMP_FORMAT, time.gmtime(now))}")
    # The kubelet's names have one-second resolution; a second rotation within the same
    # second (only with test-sized limits) gets a counter rather than overwriting.
    base, counter = target, 0
    while target.exists() or target.with_name(target.name + COMPRESS_SUFFIX).exists():
        counter += 1
        target = base.with_name(f"{base.name}~{counter}")
    os.replace(path, target)
    writer.reopen()
    return target


@dataclass
class _Entry:
    writer: LogWriter
    namespace: str
    pod: str


@dataclass
class LogRotator:
    """The running containers' log writers, and the sizes at which they are rotated."""

    max_size: int
    max_files: int
    # A test knob: a smaller containerLogMaxSize for the containers of one pod.
    pod_max_size: dict[tuple[str, str], int] = field(default_factory=dict)
    _entries: dict[str, _Entry] = field(default_factory=dict)

    def register(self, writer: LogWriter, namespace: str, pod: str) -> None:
        self._entries[str(writer.path)] = _Entry(writer, namespace, pod)

    def unregister(self, writer: LogWriter) -> None:
        self._entries.pop(str(writer.path), None)

    def limit(self, namespace: str, pod: str) -> int:
        return self.pod_max_size.get((namespace, pod), self.max_size)

    def rotate_due(self, now: float) -> list[Path]:
        """Rotate every registered log at or over its limit; the rotated files' paths."""
        rotated = []
        for entry in list(self._entries.values()):
            try:
                size = entry.writer.path.stat().st_size
                if size >= self.limit(entry.namespace, entry.pod):
                    rotated.append(rotate(entry.writer, self.max_files, now))
            except OSError as error:
                log.warning("cannot rotate %s: %s", entry.writer.path, error)
        return rotated

    async def loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            self.rotate_due(time.time())
