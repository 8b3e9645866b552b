"""One socket read buffer per thread for all of asyncio's TLS connections.

asyncio gives each TLS connection a buffer of its own (256 KiB unless told otherwise) to
read the socket into. The bytes only pass through it: the same callback that reads them
copies them into the connection's TLS state before anything else runs on the thread. So
one buffer serves every connection of an event loop, and an open log stream no longer
holds one idle: 16 KiB a stream, 80 MiB at 5,000.
"""

from __future__ import annotations

import asyncio.sslproto
import threading
from typing import Any

# A TLS record's most: one read takes a whole record, and the connection's TLS state
# (a memory BIO that keeps the largest size written to it) grows no larger than that.
READ_BUFFER_BYTES = 16 * 1024

_per_thread = threading.local()


def _thread_buffer() -> tuple[bytearray, memoryview]:
    """This thread's buffer, and the view of it asyncio reads into."""
    found: tuple[bytearray, memoryview] | None = getattr(_per_thread, "buffer", None)
    if found is None:
        buffer = bytearray(READ_BUFFER_BYTES)
        found = _per_thread.buffer = (buffer, memoryview(buffer))
    return found


class SharedReadBufferProtocol(asyncio.sslproto.SSLProtocol):
    """asyncio's TLS protocol, reading into its thread's buffer."""

    max_size = READ_BUFFER_BYTES

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # get_buffer hands the view to the socket's read and buffer_updated copies it out
        # at once; a buffer of max_size is never replaced by a larger one.
        self._ssl_buffer, self._ssl_buffer_view = _thread_buffer()


def share_read_buffers() -> None:
    """Make every TLS connection asyncio creates from now on read into its thread's buffer."""
    # asyncio looks its protocol class up in the module at each connection.
    setattr(asyncio.sslproto, "SSLProtocol", SharedReadBufferProtocol)  # noqa: B010
