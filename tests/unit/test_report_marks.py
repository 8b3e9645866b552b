"""Report blocks marked in the agent's words as the reader reads them (R72).

Cases: prose alone; a report between prose, read as success; a failure; one
without its terminator (unreadable); two blocks in a row; an indented
marker; and, for any single block, the mark is what the reader's verdict
says of the whole text.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from agentjobs.contract.conversation.report_marks import Segment, segments
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import ReportState
from tests import builders

SUCCESS = builders.block({"success": True})
FAILURE = builders.block({"success": False, "failureReason": "task", "comments": "no"})


def test_prose_alone_is_one_segment() -> None:
    assert segments("just words\nmore") == [Segment("just words\nmore")]


def test_a_report_between_prose_is_marked_with_its_state() -> None:
    assert segments(f"before\n{SUCCESS}\nafter") == [
        Segment("before"),
        Segment(SUCCESS, ReportState.SUCCESS),
        Segment("after"),
    ]


def test_failure_unreadable_and_two_blocks_in_a_row() -> None:
    unended = 'TASK_RESULT: {"success": true}'
    found = segments(f"{FAILURE}\n{unended}\n  {SUCCESS}")
    assert [s.report for s in found] == [
        ReportState.FAILURE,
        ReportState.UNREADABLE,
        ReportState.SUCCESS,
    ]


@given(
    st.text(alphabet="ab \n", max_size=40),
    st.sampled_from([SUCCESS, FAILURE, 'TASK_RESULT: {"success": 3}\nTASK_RESULT_END']),
    st.text(alphabet="ab \n", max_size=40),
)
def test_a_single_block_is_marked_as_the_reader_reads_the_whole_text(
    before: str, block: str, after: str
) -> None:
    text = f"{before}\n{block}\n{after}"
    reader = TranscriptReader()
    reader.feed(text.encode())
    marked = [s.report for s in segments(text) if s.report is not None]
    assert marked == [reader.close().report.state]
    assert json.dumps(marked[0]) != "null"
