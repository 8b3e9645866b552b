"""Log rotation and stream shaping, as the kubelet's log manager and streaming server do.

Cases: a log under its limit is left alone; one at its limit is renamed with a timestamp
and reopened; older rotated files are gzipped and those beyond maxFiles - 2 removed; a
pod's own limit; a follower drains the renamed file and goes on in the new one; a drop
rule cuts N bytes into the next K streams; an idle stream raises StreamIdle; durations
and sizes parse like the kubelet's flags.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from devcluster.node.config import parse_duration, parse_size
from devcluster.node.logrotate import LogRotator, rotated_logs
from devcluster.node.logs import LogOptions, LogWriter, stream_log
from devcluster.node.streams import StreamDropped, StreamIdle, StreamPolicy, shaped

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def writers() -> Iterator[list[LogWriter]]:
    opened: list[LogWriter] = []
    yield opened
    for writer in opened:
        writer.close()


def _writer(tmp_path: Path, data: bytes, opened: list[LogWriter]) -> LogWriter:
    writer = LogWriter(tmp_path / "0.log")
    opened.append(writer)
    writer.write("stdout", data)
    return writer


def test_a_log_under_its_limit_is_left_alone(tmp_path: Path, writers: list[LogWriter]) -> None:
    rotator = LogRotator(max_size=1000, max_files=5)
    rotator.register(_writer(tmp_path, b"short\n", writers), "ns", "p")
    assert rotator.rotate_due(NOW) == [] and rotated_logs(tmp_path / "0.log") == []


def test_a_full_log_is_renamed_and_reopened_and_old_ones_compressed(
    tmp_path: Path, writers: list[LogWriter]
) -> None:
    rotator = LogRotator(max_size=10, max_files=3)
    writer = _writer(tmp_path, b"first line\n", writers)
    rotator.register(writer, "ns", "p")
    assert [p.name for p in rotator.rotate_due(NOW)] == ["0.log.20260101-000000"]
    assert (tmp_path / "0.log").read_bytes() == b""
    writer.write("stdout", b"second line\n")
    rotator.rotate_due(NOW + 1)
    writer.write("stdout", b"third line\n")
    rotator.rotate_due(NOW + 2)
    # maxFiles 3: the current file, the newest rotated one, and one compressed.
    names = [p.name for p in rotated_logs(tmp_path / "0.log")]
    assert names == ["0.log.20260101-000001.gz", "0.log.20260101-000002"]
    assert b"third line" in (tmp_path / "0.log.20260101-000002").read_bytes()


def test_a_pod_may_have_its_own_smaller_limit(tmp_path: Path, writers: list[LogWriter]) -> None:
    rotator = LogRotator(max_size=1 << 20, max_files=5)
    rotator.register(_writer(tmp_path, b"some bytes\n", writers), "ns", "p")
    assert rotator.rotate_due(NOW) == []
    rotator.pod_max_size[("ns", "p")] = 5
    assert len(rotator.rotate_due(NOW)) == 1


def test_a_follower_drains_the_rotated_file_then_reads_the_new_one(tmp_path: Path) -> None:
    asyncio.run(_follow_across_a_rotation(tmp_path))


async def _follow_across_a_rotation(tmp_path: Path) -> None:
    rotator = LogRotator(max_size=1, max_files=5)
    writer = LogWriter(tmp_path / "0.log")
    writer.write("stdout", b"before\n")
    rotator.register(writer, "ns", "p")
    chunks: list[bytes] = []

    async def follow() -> None:
        async for chunk in stream_log(writer.path, writer.live, LogOptions(follow=True)):
            chunks.append(chunk)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    writer.write("stdout", b"late in the old file\n")
    rotator.rotate_due(NOW)
    writer.write("stdout", b"after\n")
    writer.close()
    await asyncio.wait_for(task, 5)
    assert b"".join(chunks) == b"before\nlate in the old file\nafter\n"


async def _chunks(*items: bytes, pause: float = 0.0) -> AsyncIterator[bytes]:
    for item in items:
        await asyncio.sleep(pause)
        yield item


async def _collect(stream: AsyncIterator[bytes]) -> tuple[bytes, BaseException | None]:
    out = b""
    try:
        async for chunk in stream:
            out += chunk
    except (StreamDropped, StreamIdle) as error:
        return out, error
    return out, None


def test_a_drop_rule_cuts_the_next_streams_after_n_bytes() -> None:
    asyncio.run(_drops())


async def _drops() -> None:
    policy = StreamPolicy(idle_timeout=60)
    policy.set_drop(("ns", "p", "c"), after_bytes=4, times=2)
    results = []
    for _ in range(3):
        after = policy.take_drop(("ns", "p", "c"))
        results.append(await _collect(shaped(_chunks(b"abc", b"def"), None, after)))
    assert [out for out, _ in results] == [b"abcd", b"abcd", b"abcdef"]
    assert [type(error) for _, error in results] == [StreamDropped, StreamDropped, type(None)]


def test_an_idle_stream_ends_with_stream_idle() -> None:
    stream = shaped(_chunks(b"a", b"b", pause=0.2), 0.1, None)
    out, error = asyncio.run(_collect(stream))
    assert (out, type(error)) == (b"", StreamIdle)


def test_durations_and_sizes_parse_like_the_kubelets_flags() -> None:
    assert parse_duration("4h0m0s") == 14400 and parse_duration("500ms") == 0.5
    assert parse_duration("1.5") == 1.5
    assert parse_size("10Mi") == 10 * 2**20
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration("4 hours")
