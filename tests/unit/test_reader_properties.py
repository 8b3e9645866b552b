"""Properties of the streaming reader over arbitrary input (R1-R13a, R12).

Cases: any byte stream split into chunks at any points gives the same
verdict as reading it whole, in text and jsonl, with the size limits shrunk
so that long lines, the body cap and the message tail are all reached; the
reader never raises on hostile input (invalid UTF-8, NUL bytes, 10 MB lines,
deeply nested JSON, NaN/Infinity, BOMs, ANSI codes); memory stays bounded
on a 1 GB stream of junk.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import tracemalloc
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjobs.contract.reading import report_reader, transcript_reader
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import ReportState, TranscriptFormat
from tests.unit.reading import read, read_chunks

FRAGMENTS = [
    b"TASK_RESULT:",
    b"TASK_RESULT: ",
    b"TASK_RESULT_END",
    b"TASK_",
    b"\x1b[0m",
    b"\x1b[1;32m",
    b"\x1b]0;title\x07",
    b"\x1b",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"  \t",
    b"\xef\xbb\xbf",
    b"```json\n",
    b"```\n",
    b'{"success": true}',
    b'{"success": false, "failure_reason": "task"}',
    b'{"status": "completed"}',
    b'{"success": "true"}',
    b'"comments": "a { b } \\" c"',
    b"{",
    b"}",
    b"[",
    b'"',
    b"\\",
    b"NaN",
    b"\x00",
    b"\xff\xfe",
    b"\xc3",
    b"Done.",
    b"I rewrote the parser and added tests for every edge case we found today.",
    b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}}',
    b'{"type": "result", "result": "TASK_RESULT: {\\"success\\": true}\\nTASK_RESULT_END"}',
    b'{"type": "message", "role": "assistant", "content": "TASK_RESULT: {\\"success\\": false}"}',
    b"x" * 40,
]

logs = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=12)), max_size=40).map(
    b"".join
)


@contextlib.contextmanager
def small_limits() -> Iterator[None]:
    """Shrink every size limit so that short generated logs cross them."""
    saved = (
        report_reader.BODY_LIMIT,
        report_reader.LINE_PIECE_LIMIT,
        report_reader.LAST_MESSAGE_LIMIT,
        transcript_reader.EVENT_LINE_LIMIT,
    )
    report_reader.BODY_LIMIT = 48
    report_reader.LINE_PIECE_LIMIT = 56
    report_reader.LAST_MESSAGE_LIMIT = 24
    transcript_reader.EVENT_LINE_LIMIT = 96
    try:
        yield
    finally:
        (
            report_reader.BODY_LIMIT,
            report_reader.LINE_PIECE_LIMIT,
            report_reader.LAST_MESSAGE_LIMIT,
            transcript_reader.EVENT_LINE_LIMIT,
        ) = saved


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    bounds = [0, *points, len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    log=logs,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    transcript_format=st.sampled_from(list(TranscriptFormat)),
    shrink=st.booleans(),
)
def test_r12_any_split_into_chunks_gives_the_same_verdict_as_reading_whole(
    log: bytes, cuts: list[int], transcript_format: TranscriptFormat, shrink: bool
) -> None:
    limits = small_limits() if shrink else contextlib.nullcontext()
    with limits:
        whole = read_chunks([log], transcript_format)
        chunked = read_chunks(split_at(log, cuts), transcript_format)
        byte_by_byte = read_chunks([log[i : i + 1] for i in range(len(log))], transcript_format)
    assert chunked == whole
    assert byte_by_byte == whole


@settings(max_examples=300, deadline=None)
@given(log=st.binary(max_size=2000), transcript_format=st.sampled_from(list(TranscriptFormat)))
def test_r12_the_reader_never_raises_on_arbitrary_bytes(
    log: bytes, transcript_format: TranscriptFormat
) -> None:
    verdict = read(log, transcript_format)
    assert verdict.report.state in set(ReportState)


@settings(max_examples=200, deadline=None)
@given(log=logs, cut=st.integers(min_value=0, max_value=2000))
def test_r12_asking_for_the_verdict_mid_stream_does_not_change_the_final_one(
    log: bytes, cut: int
) -> None:
    reader = TranscriptReader()
    reader.feed(log[:cut])
    reader.verdict()
    reader.feed(log[cut:])
    assert reader.close() == read(log)


def test_r12_hostile_input_gives_a_verdict_not_an_exception() -> None:
    nested = "[" * 200_000 + "]" * 200_000
    hostile = [
        b"\xff\xfe\xfd invalid utf-8 \xc3\x28\n",
        b'TASK_RESULT: {"success": true, "comments": "\xff\xfe"}\nTASK_RESULT_END\n',
        b"\x00" * 1000 + b"TASK_RESULT: \x00\nTASK_RESULT_END\n",
        b"y" * 10_000_000 + b"\n",
        b"TASK_RESULT: " + b"z" * 10_000_000 + b"\nTASK_RESULT_END\n",
        f'TASK_RESULT: {{"success": true, "deep": {nested}}}\nTASK_RESULT_END\n'.encode(),
        b'TASK_RESULT: {"success": true, "n": ' + b"9" * 100_000 + b"}\nTASK_RESULT_END\n",
        b'TASK_RESULT: {"success": NaN}\nTASK_RESULT_END\n',
        b'TASK_RESULT: {"success": true, "x": Infinity}\nTASK_RESULT_END\n',
        b'\xef\xbb\xbfTASK_RESULT: {"success": true}\nTASK_RESULT_END\n',
        b'\x1b[31m\x1b]8;;http://x\x07TASK_RESULT:\x1b[0m {"success": true}\nTASK_RESULT_END\n',
        b"\x1b[" + b"9" * 100_000 + b"m\n",
    ]
    for log in hostile:
        for transcript_format in TranscriptFormat:
            verdict = read(log, transcript_format)
            assert verdict.report.state in set(ReportState)


def test_r12_a_deeply_nested_body_is_unreadable() -> None:
    nested = "[" * 200_000 + "]" * 200_000
    log = f'TASK_RESULT: {{"success": true, "deep": {nested}}}\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r1_a_bom_before_the_marker_is_ignored() -> None:
    log = b'\xef\xbb\xbfTASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.SUCCESS


def test_r12_a_ten_megabyte_line_is_read_in_pieces() -> None:
    verdict = read(b"a" * 10_000_000 + b"\n" + b'TASK_RESULT: {"success": true}\nTASK_RESULT_END\n')
    assert verdict.report.state is ReportState.SUCCESS


def _junk_blocks(count: int, size: int) -> list[bytes]:
    rng = random.Random(7)
    pieces = [
        b"TASK_RESULT: {",
        b'TASK_RESULT: {"success": true, "comments": "',
        b"TASK_RESULT:\n```json\n",
        b"\x1b[1m",
        b"TASK_\x1b[0m",
        b"\n",
        json.dumps({"type": "assistant", "message": {"content": "x"}}).encode(),
    ]
    blocks = []
    for _ in range(count):
        parts: list[bytes] = []
        total = 0
        while total < size:
            part = rng.randbytes(rng.randint(1, 4096)) if rng.random() < 0.7 else rng.choice(pieces)
            if rng.random() < 0.01:
                part = b"q" * rng.randint(100_000, 1_500_000)  # a long line, no newline
            parts.append(part)
            total += len(part)
        blocks.append(b"".join(parts)[:size])
    return blocks


def test_r12_memory_stays_bounded_on_a_gigabyte_of_junk() -> None:
    chunk_size = 1024 * 1024
    blocks = _junk_blocks(8, chunk_size)
    reader = TranscriptReader()
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        for index in range(1024):  # 1 GiB in all
            reader.feed(blocks[index % len(blocks)])
        reader.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - baseline < 24 * 1024 * 1024, f"peak {peak - baseline} bytes"
