"""Properties of reading agent-CLI transcripts (R12 with R13b-R13f).

Cases: any stream of events from every CLI's vocabulary, read in any
chunking and with the size limits shrunk, gives the same verdict (report,
last message, terminal event, CLI error, usage) as read whole, in every
format; a message's text split into Gemini deltas at any points, or into
Claude Code blocks of one message at any line ends, reads as the whole
text in one piece; a message of 64 MiB in deltas without a newline stays
within the R12 bounds.
"""

from __future__ import annotations

import contextlib
import json
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjobs.contract.reading import report_reader
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import TranscriptFormat
from tests.unit.agent_cli_events import claude_result, claude_text, gemini_delta, gemini_result
from tests.unit.reading import read, read_chunks
from tests.unit.test_reader_properties import small_limits, split_at

EVENT_FORMATS = [f for f in TranscriptFormat if f is not TranscriptFormat.TEXT]
TEXTS = st.lists(
    st.sampled_from(
        [
            "TASK_RESULT: ",
            "TASK_RESULT:",
            "TASK_RESULT_END",
            '{"success": true}',
            '{"success": false, "failure_reason": "task"}',
            "\n",
            "I rewrote the parser and added tests for each edge case.",
            "Done.",
            "```json\n",
            "TASK_",
            "RESULT",
        ]
    ),
    max_size=6,
).map("".join)


def _events(text: str, kind: int) -> dict[str, object]:
    shapes: list[dict[str, object]] = [
        {"type": "system", "subtype": "init"},
        {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": text}]}},
        {"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": text}]}},
        {"type": "result", "subtype": "success", "is_error": kind % 2 == 0, "result": text},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": text}},
        {"type": "error", "message": text},
        {"type": "turn.completed", "usage": {"input_tokens": 3, "output_tokens": 1}},
        {"type": "turn.failed", "error": {"message": text}},
        {"id": "1", "msg": {"type": "agent_message", "message": text}},
        {"id": "1", "msg": {"type": "task_complete", "last_agent_message": text}},
        {"type": "init", "session_id": "s"},
        {"type": "message", "role": "assistant", "content": text, "delta": True},
        {"type": "tool_use", "tool_name": "read_file", "tool_id": "t"},
        {"type": "result", "status": "error", "stats": {"input_tokens": 2}},
        {"type": "text", "sessionID": "s", "part": {"messageID": "m", "text": text}},
        {"type": "step_finish", "sessionID": "s", "part": {"reason": "stop", "cost": 0.25}},
        {"type": "step_finish", "sessionID": "s", "part": {"reason": "tool-calls"}},
        {"type": "error", "sessionID": "s", "error": {"name": text}},
    ]
    return shapes[kind % len(shapes)]


transcripts = st.lists(
    st.one_of(
        st.tuples(TEXTS, st.integers(min_value=0, max_value=40)).map(
            lambda pair: json.dumps(_events(*pair)) + "\n"
        ),
        TEXTS.map(lambda text: text + "\n"),  # a line that is not JSON
    ),
    max_size=14,
).map(lambda parts: "".join(parts).encode())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    log=transcripts,
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=20),
    transcript_format=st.sampled_from(EVENT_FORMATS),
    shrink=st.booleans(),
)
def test_r12_any_chunking_of_a_cli_transcript_gives_the_same_verdict(
    log: bytes, cuts: list[int], transcript_format: TranscriptFormat, shrink: bool
) -> None:
    with small_limits() if shrink else contextlib.nullcontext():
        whole = read_chunks([log], transcript_format)
        chunked = read_chunks(split_at(log, cuts), transcript_format)
        byte_by_byte = read_chunks([log[i : i + 1] for i in range(len(log))], transcript_format)
    assert chunked == whole
    assert byte_by_byte == whole


@settings(max_examples=200, deadline=None)
@given(text=TEXTS, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_r13c_gemini_deltas_split_anywhere_read_as_the_whole_text(
    text: str, cuts: list[int]
) -> None:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    split = "".join(gemini_delta(piece) for piece in pieces) + gemini_result()
    one = gemini_delta(text) + gemini_result()
    assert read(split, TranscriptFormat.GEMINI_CLI) == read(one, TranscriptFormat.GEMINI_CLI)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(TEXTS.map(lambda t: t.replace("\n", " ")), min_size=1, max_size=6))
def test_r13c_claude_blocks_of_one_message_read_as_the_whole_text(lines: list[str]) -> None:
    blocks = "".join(claude_text(text, "msg_1") for text in lines) + claude_result()
    whole = claude_text("\n".join(lines), "msg_1") + claude_result()
    assert read(blocks, TranscriptFormat.CLAUDE_CODE) == read(whole, TranscriptFormat.CLAUDE_CODE)


def test_r12_a_huge_delta_message_stays_within_the_bounds() -> None:
    piece = gemini_delta("word " * 200).encode()  # 1 KB of text, no newline
    reader = TranscriptReader(TranscriptFormat.GEMINI_CLI)
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        for _ in range(64 * 1024):  # 64 MiB of one message
            reader.feed(piece)
        reader.feed(gemini_result().encode())
        verdict = reader.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - baseline < 8 * 1024 * 1024, f"peak {peak - baseline} bytes"
    assert verdict.last_message is not None
    assert len(verdict.last_message.encode()) <= report_reader.LAST_MESSAGE_LIMIT
