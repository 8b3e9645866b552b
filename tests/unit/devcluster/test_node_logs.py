"""The node's log format keeps every byte, and serving honours the kubelet's options; a
failed container's log tail is its message under FallbackToLogsOnError (80 lines, 2 KiB)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from devcluster.node.logs import (
    LogEntry,
    LogOptions,
    LogWriter,
    decode_line,
    encode_chunk,
    format_timestamp,
    log_tail_message,
    parse_timestamp,
    render,
    split_entries,
    stream_log,
    tail_entries,
)

TS = "2026-01-02T03:04:05.123456789Z"


@given(st.lists(st.tuples(st.sampled_from(["stdout", "stderr"]), st.binary(max_size=200))))
def test_any_chunks_round_trip_byte_exact(chunks: list[tuple[str, bytes]]) -> None:
    encoded = b"".join(encode_chunk(data, stream, TS) for stream, data in chunks)
    entries, used = split_entries(encoded)
    assert used == len(encoded)
    assert render(entries, LogOptions()) == b"".join(data for _, data in chunks)


def test_partial_chunk_is_tagged_p_and_full_line_f() -> None:
    encoded = encode_chunk(b"one\ntw", "stdout", TS)
    assert encoded == f"{TS} stdout F one\n{TS} stdout P tw\n".encode()
    entry = decode_line(encoded.split(b"\n")[1])
    assert (entry.stream, entry.partial, entry.data) == ("stdout", True, b"tw")


def test_incomplete_file_line_is_left_for_later() -> None:
    entries, used = split_entries(f"{TS} stdout F a\n{TS} std".encode())
    assert [e.data for e in entries] == [b"a\n"]
    assert used == len(f"{TS} stdout F a\n")


def test_timestamps_round_trip() -> None:
    ns = 1_767_323_045_123_456_789
    assert format_timestamp(ns) == TS
    assert parse_timestamp(TS) == ns
    assert parse_timestamp("2026-01-02T03:04:05Z") == ns - 123_456_789
    assert parse_timestamp("2026-01-02T04:04:05+01:00") == ns - 123_456_789


def _entries(text: bytes) -> list[LogEntry]:
    return split_entries(encode_chunk(text, "stdout", TS))[0]


def test_tail_counts_lines_not_entries() -> None:
    entries = [*_entries(b"a\nb\n"), *_entries(b"c1"), *_entries(b"c2\n"), *_entries(b"d")]
    assert render(tail_entries(entries, 2), LogOptions()) == b"c1c2\nd"
    assert render(tail_entries(entries, 0), LogOptions()) == b""
    assert render(tail_entries(entries, 10), LogOptions()) == b"a\nb\nc1c2\nd"


def test_timestamps_and_since_filter() -> None:
    old = encode_chunk(b"old\n", "stdout", "2026-01-01T00:00:00.000000000Z")
    new = encode_chunk(b"new\n", "stderr", TS)
    entries, _ = split_entries(old + new)
    since = LogOptions(since_ns=parse_timestamp("2026-01-02T00:00:00Z"))
    assert render(entries, since) == b"new\n"
    assert render(entries, LogOptions(timestamps=True)).endswith(f"{TS} new\n".encode())


def _collect(path: Path, writer: LogWriter | None, options: LogOptions) -> bytes:
    async def run() -> bytes:
        out = b""
        async for chunk in stream_log(path, writer.live if writer else None, options):
            out += chunk
        return out

    return asyncio.run(run())


def test_limit_bytes_and_tail_from_file(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(encode_chunk(b"line1\nline2\nline3\n", "stdout", TS))
    assert _collect(path, None, LogOptions(limit_bytes=8)) == b"line1\nli"
    assert _collect(path, None, LogOptions(tail_lines=1)) == b"line3\n"


def test_follow_streams_new_bytes_until_closed(tmp_path: Path) -> None:
    async def run() -> list[bytes]:
        writer = LogWriter(tmp_path / "c" / "0.log")
        writer.write("stdout", b"first\n")
        received: list[bytes] = []

        async def follow() -> None:
            async for chunk in stream_log(writer.path, writer.live, LogOptions(follow=True)):
                received.append(chunk)

        task = asyncio.create_task(follow())
        await asyncio.sleep(0.01)
        assert received == [b"first\n"]
        writer.write("stderr", b"partial")
        await asyncio.sleep(0.01)
        assert received[-1] == b"partial"  # served right away, no newline needed
        writer.write("stdout", b" end\n")
        writer.close()
        await asyncio.wait_for(task, 1)
        return received

    assert b"".join(asyncio.run(run())) == b"first\npartial end\n"


def test_a_failed_containers_message_is_its_logs_last_80_lines_within_2_kib(
    tmp_path: Path,
) -> None:
    path = tmp_path / "0.log"
    writer = LogWriter(path)
    writer.write("stdout", b"".join(b"line %d\n" % n for n in range(100)))
    writer.write("stderr", b"agentjobs: error: no such bucket\n")
    writer.close()
    message = log_tail_message(path)
    assert message is not None
    assert message.startswith("line 21\n") and message.endswith("no such bucket\n")
    writer = LogWriter(path)
    writer.write("stderr", b"x" * 5000 + b"\nthe end\n")
    writer.close()
    long = log_tail_message(path)
    assert long is not None and len(long.encode()) == 2048 and long.endswith("x\nthe end\n")
    assert log_tail_message(tmp_path / "missing.log") is None


def test_a_long_log_is_read_from_its_end_only(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    writer = LogWriter(path)
    for n in range(20_000):
        writer.write("stdout", b"line %d\n" % n)
    writer.close()
    message = log_tail_message(path)
    assert message is not None
    assert message.splitlines()[-1] == "line 19999" and len(message.splitlines()) == 80
