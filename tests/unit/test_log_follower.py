"""Resuming a followed log without losing or repeating a byte (R14).

Cases: one pass delivers the log; after a drop, the replayed beginning is
skipped and only new bytes are delivered, however the new stream is
chunked; a replay that differs, or is shorter than what was read, breaks
the stream; a restarted reader checks the log still begins with what an
earlier one checkpointed (a rotated log does not).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import pytest

from agentjobs.adapters.log_follower import LogFollower


class ScriptedLogs:
    """Serves one scripted list of chunks per reconnect, like successive pods/log streams."""

    def __init__(self, passes: list[list[bytes]]) -> None:
        self._passes = list(passes)

    async def stream_log(
        self, namespace: str, pod: str, container: str, *, follow: bool, idle_seconds: float
    ) -> AsyncIterator[bytes]:
        for chunk in self._passes.pop(0):
            yield chunk


def follow(
    passes: list[list[bytes]], known: tuple[int, str] | None = None
) -> tuple[bytes, LogFollower]:
    follower = LogFollower(
        ScriptedLogs(passes),  # type: ignore[arg-type]
        namespace="ns",
        pod="p",
        container="agent",
        idle_seconds=60,
        known=known,
    )

    async def read_all() -> bytes:
        received = b""
        for number in range(len(passes)):
            async for chunk in follower.follow(follow=number < len(passes) - 1):
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


def checkpoint(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("chunks", [[b"abcdef"], [b"ab", b"cd", b"ef"], [b"abc", b"def"]])
def test_r14_a_restarted_reader_accepts_a_log_that_begins_with_the_checkpoint(
    chunks: list[bytes],
) -> None:
    received, follower = follow([chunks], known=checkpoint(b"abcd"))
    assert (received, follower.intact, follower.sha256) == (
        b"abcdef",
        True,
        hashlib.sha256(b"abcdef").hexdigest(),
    )


def test_r14_a_rotated_log_no_longer_begins_with_the_checkpoint() -> None:
    _, follower = follow([[b"efgh-after-rotation"]], known=checkpoint(b"abcd"))
    assert not follower.intact


def test_r14_a_log_shorter_than_the_checkpoint_is_broken_once_read_to_its_end() -> None:
    _, follower = follow([[b"ab"]], known=checkpoint(b"abcd"))
    assert not follower.intact
