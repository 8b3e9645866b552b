"""Follow an agent container's log through the API, without holding a thread (R14).

The log is read from its first byte. When a stream ends before the container
has terminated (a dropped connection, an API server restart, the kubelet's
idle timeout), the follower reconnects from the first byte again and checks
that the bytes it already read are exactly the new stream's beginning (same
length and SHA-256); only then does it go on with the bytes after them. If it
cannot prove that (the log was rotated or truncated), the stream is broken:
reading continues, but ``intact`` is false from then on.

A follow stream may end at any time, so once the container has terminated the
reader makes a last pass that does not follow: only when that pass reaches the
end of the log has the log been read whole.

A restarted operator knows how much an earlier reader had read (``known``: a
length and its SHA-256, checkpointed in the Phase's status); the first pass
checks that the log still begins with exactly those bytes, which a rotated or
truncated log does not.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

from agentjobs.adapters import metrics
from agentjobs.adapters.kube import Kube


class LogFollower:
    """Bytes of one container's log, each delivered once, in order."""

    def __init__(
        self,
        kube: Kube,
        *,
        namespace: str,
        pod: str,
        container: str,
        idle_seconds: float,
        known: tuple[int, str] | None = None,
    ) -> None:
        self._kube = kube
        self._namespace = namespace
        self._pod = pod
        self._container = container
        self._idle_seconds = idle_seconds
        self._known = known
        self._digest = hashlib.sha256()
        self.offset = 0
        self.passes = 0
        self.intact = True

    @property
    def sha256(self) -> str:
        """The SHA-256 of every byte delivered so far."""
        return self._digest.hexdigest()

    def _deliver(self, chunk: bytes) -> None:
        metrics.log_bytes_read.inc(len(chunk))
        if self._known is not None:
            length, sha256 = self._known
            if self.offset < length <= self.offset + len(chunk):
                cut = length - self.offset
                self._digest.update(chunk[:cut])
                self.intact = self.intact and self._digest.hexdigest() == sha256
                self._known = None
                self._digest.update(chunk[cut:])
                self.offset += len(chunk)
                return
        self._digest.update(chunk)
        self.offset += len(chunk)

    async def follow(self, *, follow: bool = True) -> AsyncIterator[bytes]:
        """One pass over the log, yielding only the bytes not delivered before. With
        ``follow=False`` it ends at the log's current end."""
        self.passes += 1
        expected = self._digest.copy()
        resume_at = self.offset
        replayed = hashlib.sha256()
        position = 0
        stream = self._kube.stream_log(
            self._namespace,
            self._pod,
            self._container,
            follow=follow,
            idle_seconds=self._idle_seconds,
        )
        metrics.log_streams.inc()
        try:
            async for chunk in stream:
                if position < resume_at:
                    needed = resume_at - position
                    replayed.update(chunk[:needed])
                    position += min(needed, len(chunk))
                    if position < resume_at:
                        continue
                    if replayed.digest() != expected.digest():
                        self.intact = False
                    chunk = chunk[needed:]
                    if not chunk:
                        continue
                position += len(chunk)
                self._deliver(chunk)
                yield chunk
        finally:
            metrics.log_streams.dec()
        if position < resume_at:  # the log is now shorter than what was read before
            self.intact = False
        if not follow and self._known is not None:  # shorter than an earlier reader saw
            self.intact = False
