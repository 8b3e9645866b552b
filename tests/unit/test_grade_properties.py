"""Properties of the grade reader over arbitrary input (R39 framed as R1-R4, R12).

Cases: any byte stream split into chunks at any points gives the same grade
as reading it whole, in every transcript format, with the size limits
shrunk so that long lines, the body cap and the message tail are all
reached; the reader never raises on arbitrary bytes; asking for the grade
mid-stream does not change the final one; memory stays bounded on 128 MiB
of open blocks and long lines.
"""

from __future__ import annotations

import contextlib
import random
import tracemalloc
from collections.abc import Iterable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjobs.contract.reading.grade_reader import GradeReader, GradeVerdict
from agentjobs.models.contract import GradeState, TranscriptFormat
from tests.unit.test_reader_properties import small_limits, split_at

FRAGMENTS = [
    b"GRADE_RESULT:",
    b"GRADE_RESULT: ",
    b"GRADE_RESULT_END",
    b"GRADE_",
    b"TASK_RESULT:",
    b"\x1b[0m",
    b"\x1b[1;32m",
    b"\x1b",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"  \t",
    b"\xef\xbb\xbf",
    b"```json\n",
    b"```\n",
    b'{"result": "satisfied", "explanation": "ok"}',
    b'{"result": "needs_revision", "criteria": [{"name": "a", "met": false, "feedback": "b"}]}',
    b'{"result": "failed", "usage": {"input_tokens": 3}}',
    b'{"result": "passed"}',
    b'"explanation": "a { b } \\" c"',
    b"{",
    b"}",
    b'"',
    b"\x00",
    b"\xc3",
    b'{"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}}',
    b'{"type": "result", "result": "GRADE_RESULT: {\\"result\\": \\"satisfied\\"}'
    b'\\nGRADE_RESULT_END"}',
    b'{"type": "message", "role": "assistant", "content": "GRADE_RESULT: {\\"result\\": 1}"}',
    b"x" * 40,
]

logs = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=12)), max_size=40).map(
    b"".join
)


def read_chunks(chunks: Iterable[bytes], transcript_format: TranscriptFormat) -> GradeVerdict:
    reader = GradeReader(transcript_format)
    for chunk in chunks:
        reader.feed(chunk)
    return reader.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    log=logs,
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    transcript_format=st.sampled_from(list(TranscriptFormat)),
    shrink=st.booleans(),
)
def test_r39_r12_any_split_into_chunks_gives_the_same_grade_as_reading_whole(
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
def test_r39_the_grade_reader_never_raises_on_arbitrary_bytes(
    log: bytes, transcript_format: TranscriptFormat
) -> None:
    assert read_chunks([log], transcript_format).grade.state in set(GradeState)


@settings(max_examples=200, deadline=None)
@given(log=logs, cut=st.integers(min_value=0, max_value=2000))
def test_r39_asking_for_the_grade_mid_stream_does_not_change_the_final_one(
    log: bytes, cut: int
) -> None:
    reader = GradeReader()
    reader.feed(log[:cut])
    reader.verdict()
    reader.feed(log[cut:])
    assert reader.close() == read_chunks([log], TranscriptFormat.TEXT)


def test_r39_the_fragments_do_reach_every_grade_state() -> None:
    """The generated logs can reach each state, so the properties above test something."""
    seen = set()
    for fragment in FRAGMENTS[15:19]:
        log = b"GRADE_RESULT: " + fragment + b"\nGRADE_RESULT_END\n"
        seen.add(read_chunks([log], TranscriptFormat.TEXT).grade.state)
    assert seen == {
        GradeState.SATISFIED,
        GradeState.NEEDS_REVISION,
        GradeState.FAILED,
        GradeState.UNREADABLE,
    }


def test_r39_r12_memory_stays_bounded_on_open_blocks_and_long_lines() -> None:
    pieces = [
        b'GRADE_RESULT: {"result": "satisfied", "explanation": "',
        b"GRADE_RESULT:\n```json\n{",
        b"q" * 1_500_000,
        b"\n",
        b"\x1b[1mGRADE_\x1b[0m",
    ]
    rng = random.Random(11)
    blocks = [b"".join(rng.choice(pieces) for _ in range(40))[: 1024 * 1024] for _ in range(8)]
    reader = GradeReader()
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        for index in range(128):  # 128 MiB in all
            reader.feed(blocks[index % len(blocks)])
        reader.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - baseline < 24 * 1024 * 1024, f"peak {peak - baseline} bytes"
