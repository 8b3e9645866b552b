"""Resuming a followed log without losing or repeating a byte (R14).

Cases: one pass delivers the log; after a drop, the replayed beginning is
skipped and only new bytes are delivered, however the new stream is
chunked; a replay that differs, or is shorter than what was read, breaks
the stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agentjobs.adapters.log_follower import LogFollower


class ScriptedLogs:
    """Serves one scripted list of chunks per reconnect, like successive pods/log streams."""

    def __init__(self, passes: list[list[bytes]]) -> None:
        self._passes = list(passes)

    async def stream_log(self, namespace: str, pod: str, container: str) -> AsyncIterator[bytes]:
        for chunk in self._passes.pop(0):
            yield chunk


def follow(passes: list[list[bytes]]) -> tuple[bytes, LogFollower]:
    follower = LogFollower(ScriptedLogs(passes), namespace="ns", pod="p", container="agent")  # type: ignore[arg-type]

    async def read_all() -> bytes:
        received = b""
        for _ in passes:
            async for chunk in follower.follow():
                received += chunk
        return received

    return asyncio.run(read_all()), follower


def test_r14_one_pass_delivers_the_whole_log() -> None:
    received, follower = follow([[b"hello ", b"world\n"]])
    assert (received, follower.intact, follower.offset) == (b"hello world\n", True, 12)


@pytest.mark.parametrize(
    "replay",
    [[b"abcdef"], [b"a", b"b", b"c", b"d", b"ef"], [b"abc", b"def"], [b"ab", b"cdef"]],
)
def test_r14_a_reconnect_skips_exactly_what_was_read(replay: list[bytes]) -> None:
    received, follower = follow([[b"abc"], replay])
    assert (received, follower.intact) == (b"abcdef", True)


def test_r14_a_replay_that_differs_breaks_the_stream() -> None:
    _, follower = follow([[b"abc"], [b"abXdef"]])
    assert not follower.intact


def test_r14_a_log_shorter_than_what_was_read_breaks_the_stream() -> None:
    _, follower = follow([[b"abcdef"], [b"abc"]])
    assert not follower.intact
