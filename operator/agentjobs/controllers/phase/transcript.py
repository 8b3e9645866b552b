"""The agent's log as the operator keeps it: spooled, counted, hashed, cut at its limit (R58)."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

from agentjobs.runtime.config import DEFAULT_MAX_TRANSCRIPT_BYTES

# A thousand running phases hold at most 64 MiB of transcript in memory; the rest waits on
# /tmp (the chart's emptyDir) until it is stored.
TRANSCRIPT_IN_MEMORY = 64 * 1024


@dataclass
class Transcript:
    """The agent's log as the operator read it: its size (``size``), and its bytes when there
    is a store to keep them in (``kept``), spooled to disk past :data:`TRANSCRIPT_IN_MEMORY`.

    R58: only the first ``limit`` bytes are kept; past them the log is still read (and
    counted) but ``truncated``, and :meth:`seal` ends what is kept with a line that says so.
    ``stored`` and ``sha256`` are what is kept, or would be without a store.
    """

    kept: bool = True
    limit: int = DEFAULT_MAX_TRANSCRIPT_BYTES
    file: IO[bytes] = field(
        default_factory=lambda: tempfile.SpooledTemporaryFile(TRANSCRIPT_IN_MEMORY)  # noqa: SIM115
    )
    size: int = 0
    stored: int = 0
    truncated: bool = False
    sealed: bool = False
    _digest: Any = field(default_factory=hashlib.sha256, init=False, repr=False)

    @property
    def sha256(self) -> str:
        return str(self._digest.hexdigest())

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.kept and len(chunk) > self.limit - self.stored:
            self.truncated = True
            chunk = chunk[: max(self.limit - self.stored, 0)]
        self._keep(chunk)

    def seal(self) -> None:
        """End a truncated transcript with the line that says what was left out (once)."""
        if self.truncated and not self.sealed:
            self._keep(truncation_note(self.limit, self.size))
        self.sealed = True

    def close(self) -> None:
        """Let go of the spooled bytes (a file past TRANSCRIPT_IN_MEMORY); the counts stay."""
        self.file.close()

    def _keep(self, chunk: bytes) -> None:
        if self.kept and chunk:
            self.file.write(chunk)
        self._digest.update(chunk)
        self.stored += len(chunk)


def truncation_note(limit: int, size: int) -> bytes:
    """The last line of a transcript cut at ``limit`` bytes of a log of ``size``."""
    return (
        f"\n[agentjobs: transcript truncated: its first {limit} bytes are stored, of the "
        f"{size} bytes the agent wrote (--max-transcript-bytes); all of them were read]\n"
    ).encode()
