"""Follow an agent container's log through the API, without holding a thread (R14).

The log is read from its first byte. When a stream ends before the container
has terminated (a dropped connection, an API server restart), the follower
reconnects from the first byte again and checks that the bytes it already
read are exactly the new stream's beginning (same length and SHA-256); only
then does it go on with the bytes after them. If it cannot prove that (the
log was rotated or truncated), the stream is broken: reading continues, but
``intact`` is false from then on.

A follow stream that ends cleanly once the container has terminated is the
end of the log: the kubelet closes it only after sending the last byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator

from agentjobs.adapters.kube import Kube


class LogFollower:
    """Bytes of one container's log, each delivered once, in order."""

    def __init__(self, kube: Kube, *, namespace: str, pod: str, container: str) -> None:
        self._kube = kube
        self._namespace = namespace
        self._pod = pod
        self._container = container
        self._digest = hashlib.sha256()
        self.offset = 0
        self.passes = 0
        self.intact = True

    async def follow(self) -> AsyncIterator[bytes]:
        """One pass over the stream, yielding only the bytes not delivered before."""
        self.passes += 1
        expected = self._digest.copy()
        resume_at = self.offset
        replayed = hashlib.sha256()
        position = 0
        stream = self._kube.stream_log(self._namespace, self._pod, self._container)
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
            self.offset += len(chunk)
            self._digest.update(chunk)
            yield chunk
        if position < resume_at:  # the log is now shorter than what was read before
            self.intact = False
