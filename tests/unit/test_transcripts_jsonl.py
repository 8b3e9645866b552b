"""Reading a `jsonl` transcript (R13, R13a, R14's terminal event).

Cases: Claude Code `stream-json` and the generic message shape; non-JSON
lines read as text; a report split over two messages; the terminal `result`
event; the last message of jsonl transcripts; oversize event lines.
"""

from __future__ import annotations

import json

from agentjobs.contract.reading import transcript_reader
from agentjobs.models.contract import ReportState, TranscriptFormat
from tests import builders
from tests.unit.reading import read

JSONL = TranscriptFormat.JSONL


def claude_text(text: str) -> str:
    event = {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }
    return json.dumps(event) + "\n"


def claude_tool_use() -> str:
    block = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    return json.dumps({"type": "assistant", "message": {"content": [block]}}) + "\n"


def generic_message(content: object) -> str:
    return json.dumps({"type": "message", "role": "assistant", "content": content}) + "\n"


def result(text: str | None = None) -> str:
    event: dict[str, object] = {"type": "result", "subtype": "success"}
    if text is not None:
        event["result"] = text
    return json.dumps(event) + "\n"


REPORT = builders.block({"success": True, "comments": "ok"})


def test_r13_a_report_in_a_claude_code_assistant_message_is_read() -> None:
    log = claude_text("I fixed it.\n" + REPORT) + result()
    verdict = read(log, JSONL)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.report.comments == "ok"


def test_r13_a_report_in_a_generic_assistant_message_is_read() -> None:
    log = (
        generic_message(
            'TASK_RESULT: {"success": false, "failure_reason": "refused"}\nTASK_RESULT_END'
        )
        + result()
    )
    assert read(log, JSONL).report.state is ReportState.FAILURE


def test_r13_generic_messages_may_carry_a_list_of_text_blocks() -> None:
    log = generic_message([{"type": "text", "text": REPORT}]) + result()
    assert read(log, JSONL).report.state is ReportState.SUCCESS


def test_r13_a_report_inside_a_tool_result_or_user_message_is_not_the_agents() -> None:
    user = {"type": "user", "message": {"content": [{"type": "tool_result", "content": REPORT}]}}
    log = json.dumps(user) + "\n" + claude_text("Still working on it.") + result()
    assert read(log, JSONL).report.state is ReportState.NOT_REPORTED


def test_r13_lines_that_are_not_json_are_read_as_text() -> None:
    log = "plain stderr line\n" + REPORT + "\n" + result()
    assert read(log, JSONL).report.state is ReportState.SUCCESS


def test_r13_a_report_split_over_two_messages_is_read() -> None:
    log = claude_text('TASK_RESULT: {"success": true}') + claude_text("TASK_RESULT_END") + result()
    assert read(log, JSONL).report.state is ReportState.SUCCESS


def test_r13_the_result_event_repeating_the_last_message_does_not_count_the_report_twice() -> None:
    log = claude_text(REPORT) + result(REPORT)
    assert read(log, JSONL).report.warnings == []


def test_r13_a_result_event_alone_is_read_for_a_report() -> None:
    assert read(result(REPORT), JSONL).report.state is ReportState.SUCCESS


def test_r13_the_strongest_claim_holds_across_messages() -> None:
    failure = 'TASK_RESULT: {"success": false, "failure_reason": "task"}\nTASK_RESULT_END'
    log = claude_text(failure) + claude_text(REPORT) + result()
    assert read(log, JSONL).report.state is ReportState.FAILURE


def test_r13a_the_last_message_is_the_last_assistant_text_without_its_report() -> None:
    log = (
        claude_text("Looking at the code.")
        + claude_tool_use()
        + claude_text("I rewrote the retry loop and added two tests.\n" + REPORT)
        + result("I rewrote the retry loop and added two tests.\n" + REPORT)
    )
    verdict = read(log, JSONL)
    assert verdict.last_message == "I rewrote the retry loop and added two tests."


def test_r13a_a_final_message_holding_only_the_report_leaves_the_previous_one_last() -> None:
    log = claude_text("All the work is summarised here.") + claude_text(REPORT) + result()
    assert read(log, JSONL).last_message == "All the work is summarised here."


def test_r13a_the_terminal_result_text_is_the_last_message_when_it_differs() -> None:
    log = claude_text("Working.") + result("Final summary of the change set.")
    assert read(log, JSONL).last_message == "Final summary of the change set."


def test_r14_the_terminal_event_is_seen() -> None:
    assert read(claude_text("hi") + result(), JSONL).terminal_event_seen
    assert not read(claude_text("hi"), JSONL).terminal_event_seen


def test_r13_an_event_line_too_long_to_parse_is_skipped_with_a_warning() -> None:
    huge = json.dumps({"type": "user", "content": "x" * (transcript_reader.EVENT_LINE_LIMIT + 5)})
    log = huge + "\n" + claude_text(REPORT) + result()
    verdict = read(log, JSONL)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.report.warnings == [
        f"1 transcript lines over {transcript_reader.EVENT_LINE_LIMIT} bytes were skipped"
    ]


def test_r13_text_mode_reads_jsonl_lines_as_plain_text() -> None:
    log = claude_text(REPORT) + result()
    assert read(log).report.state is ReportState.NOT_REPORTED
