"""asyncio's TLS connections read through one buffer per thread, and each still gets exactly
its own bytes: many connections to a local TLS server, read at once, each answered with
bytes of its own many times the buffer's size. A thread of its own has a buffer of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import threading
from typing import Any

from agentjobs.adapters import tls_identity, tls_read_buffer

CONNECTIONS = 24
ANSWER_BYTES = 40 * tls_read_buffer.READ_BUFFER_BYTES
IDENTITY = tls_identity.derived(b"tls read buffer test", ["127.0.0.1"])


def _answer(index: int) -> bytes:
    """Bytes that differ in every block from any other connection's answer."""
    blocks = range(ANSWER_BYTES // 32)  # a SHA-256 digest is 32 bytes
    return b"".join(hashlib.sha256(f"{index}/{block}".encode()).digest() for block in blocks)


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    index = int(await reader.readline())
    answer = _answer(index)
    for start in range(0, len(answer), 5000):  # in pieces that straddle TLS records
        writer.write(answer[start : start + 5000])
        await writer.drain()
    writer.close()
    await writer.wait_closed()


async def _fetch(port: int, index: int) -> tuple[bytes, Any]:
    client = ssl.create_default_context(cadata=IDENTITY.ca_pem)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
    protocol = writer.transport._ssl_protocol  # type: ignore[attr-defined]
    writer.write(f"{index}\n".encode())
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer, protocol


async def _exchange(count: int) -> list[tuple[bytes, Any]]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0, ssl=IDENTITY.server_context())
    port = server.sockets[0].getsockname()[1]
    try:
        return list(await asyncio.gather(*(_fetch(port, index) for index in range(count))))
    finally:
        server.close()
        await server.wait_closed()


def test_connections_read_at_once_share_one_buffer_and_each_gets_its_own_bytes() -> None:
    tls_read_buffer.share_read_buffers()
    results = asyncio.run(_exchange(CONNECTIONS))
    for index, (answer, protocol) in enumerate(results):
        assert answer == _answer(index)
        assert isinstance(protocol, tls_read_buffer.SharedReadBufferProtocol)
    buffers = {id(protocol._ssl_buffer_view) for _, protocol in results}
    assert len(buffers) == 1
    assert len(results[0][1]._ssl_buffer) == tls_read_buffer.READ_BUFFER_BYTES


def test_another_thread_reads_into_a_buffer_of_its_own() -> None:
    tls_read_buffer.share_read_buffers()
    here = asyncio.run(_exchange(1))[0][1]._ssl_buffer_view
    there: list[Any] = []
    thread = threading.Thread(target=lambda: there.extend(asyncio.run(_exchange(1))))
    thread.start()
    thread.join()
    assert there[0][0] == _answer(0)
    assert there[0][1]._ssl_buffer_view is not here
