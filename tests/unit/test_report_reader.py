"""Reading TASK_RESULT blocks from a text log (R1-R4, R10-R12, R13a).

Cases: ANSI stripping and where a marker may stand (R1); single-line and
pretty-printed bodies (R2); the terminator, end of stream, the 1 MiB cap and
a marker that interrupts a report (R3); code fences (R4); the four states
(R10); the strongest claim (R11); reading twice (R12); the last paragraph
(R13a).
"""

from __future__ import annotations

import pytest

from agentjobs.contract.reading import report_reader
from agentjobs.models.contract import ReportState, SideEffects
from tests.unit.reading import read, report_block

SUCCESS = '{"success": true}'
FAILURE = '{"success": false, "failure_reason": "task"}'


# -- R1 marker ---------------------------------------------------------------


def test_r1_ansi_colour_around_the_marker_is_stripped() -> None:
    log = '\x1b[32mTASK_RESULT:\x1b[0m {"success": true}\n\x1b[2mTASK_RESULT_END\x1b[0m\n'
    assert read(log).report.state is ReportState.SUCCESS


def test_r1_an_escape_sequence_cut_into_the_marker_is_stripped_first() -> None:
    log = 'TASK_\x1b[1mRESULT:\x1b[0m {"success": false}\nTASK_RESULT_E\x1b[0mND\n'
    assert read(log).report.state is ReportState.FAILURE


def test_r1_leading_spaces_and_tabs_before_the_marker_are_ignored() -> None:
    log = ' \t  TASK_RESULT: {"success": true}\n\t TASK_RESULT_END \n'
    assert read(log).report.state is ReportState.SUCCESS


def test_r1_the_marker_in_the_middle_of_a_line_is_prose() -> None:
    log = 'I will end with TASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    verdict = read(log)
    assert verdict.report.state is ReportState.NOT_REPORTED
    assert verdict.last_message == 'I will end with TASK_RESULT: {"success": true}'


def test_r1_a_marker_needs_its_colon() -> None:
    assert read('TASK_RESULT {"success": true}\nTASK_RESULT_END\n').report.state is (
        ReportState.NOT_REPORTED
    )


# -- R2 body -----------------------------------------------------------------


def test_r2_the_json_may_sit_on_the_marker_line() -> None:
    verdict = read(report_block('{"success": true, "comments": "one line"}'))
    assert verdict.report.comments == "one line"


def test_r2_the_json_may_be_pretty_printed_over_several_lines() -> None:
    log = (
        "TASK_RESULT:\n"
        "{\n"
        '  "success": false,\n'
        '  "failure_reason": "refused",\n'
        '  "comments": "braces { and } inside strings do not count"\n'
        "}\n"
        "TASK_RESULT_END\n"
    )
    report = read(log).report
    assert report.state is ReportState.FAILURE
    assert report.comments == "braces { and } inside strings do not count"


def test_r2_a_body_that_is_not_json_is_unreadable() -> None:
    report = read(report_block("success: true")).report
    assert report.state is ReportState.UNREADABLE
    assert report.warnings[0].startswith("unreadable report:")


def test_r2_two_json_values_are_unreadable() -> None:
    log = 'TASK_RESULT: {"success": true}\n{"success": true}\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r2_a_string_broken_over_two_lines_is_unreadable() -> None:
    log = 'TASK_RESULT: {"success": true, "comments": "line one\nline two"}\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


# -- R3 terminator -----------------------------------------------------------


def test_r3_a_marker_at_the_end_of_the_stream_is_unreadable() -> None:
    report = read('work\nTASK_RESULT: {"success": true}\n').report
    assert report.state is ReportState.UNREADABLE
    assert "ended before TASK_RESULT_END" in report.warnings[0]


def test_r3_a_stream_ending_inside_the_json_is_unreadable() -> None:
    assert read('TASK_RESULT: {"success":').report.state is ReportState.UNREADABLE


def test_r3_the_terminator_must_be_on_the_line_right_after_the_json() -> None:
    log = 'TASK_RESULT: {"success": true}\n\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r3_the_terminator_on_the_json_line_is_unreadable() -> None:
    log = 'TASK_RESULT: {"success": true} TASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r3_whitespace_around_the_terminator_is_ignored() -> None:
    log = 'TASK_RESULT: {"success": true}\r\n   TASK_RESULT_END\t\r\n'
    assert read(log).report.state is ReportState.SUCCESS


def test_r3_a_terminator_line_needs_nothing_else_on_it() -> None:
    log = 'TASK_RESULT: {"success": true}\nTASK_RESULT_END.\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r3_a_body_over_one_mebibyte_is_unreadable() -> None:
    padding = "x" * (report_reader.BODY_LIMIT + 10)
    log = f'TASK_RESULT: {{"success": true, "comments": "{padding}"}}\nTASK_RESULT_END\n'
    report = read(log).report
    assert report.state is ReportState.UNREADABLE
    assert "longer than" in report.warnings[0] or "over" in report.warnings[0]


def test_r3_a_pretty_printed_body_over_one_mebibyte_is_unreadable() -> None:
    lines = "".join(f'  "key{i}": "{"y" * 100}",\n' for i in range(11_000))
    log = f'TASK_RESULT: {{\n{lines}  "success": true\n}}\nTASK_RESULT_END\n'
    report = read(log).report
    assert report.state is ReportState.UNREADABLE
    assert "over 1048576 bytes" in report.warnings[0]


def test_r3_a_body_just_under_the_cap_is_read() -> None:
    padding = "x" * (report_reader.BODY_LIMIT - 100)
    log = f'TASK_RESULT: {{"success": true, "comments": "{padding}"}}\nTASK_RESULT_END\n'
    assert read(log).report.comments == padding


def test_r3_a_new_marker_closes_the_open_report_as_unreadable_and_begins_a_new_one() -> None:
    log = 'TASK_RESULT: {"success": true,\nTASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    report = read(log).report
    assert report.state is ReportState.SUCCESS
    assert "2 reports were written (1 success, 1 unreadable)" in report.warnings[-1]


def test_r3_a_stray_terminator_is_not_prose() -> None:
    verdict = read("Here is what I changed in the parser today.\nTASK_RESULT_END\n")
    assert verdict.report.state is ReportState.NOT_REPORTED
    assert verdict.last_message == "Here is what I changed in the parser today."


# -- R4 fence ----------------------------------------------------------------


@pytest.mark.parametrize("opening", ["```", "```json", "```JSON"])
def test_r4_a_fenced_body_is_read_as_if_the_fence_were_absent_with_a_warning(opening: str) -> None:
    log = f'TASK_RESULT:\n{opening}\n{{"success": true}}\n```\nTASK_RESULT_END\n'
    report = read(log).report
    assert report.state is ReportState.SUCCESS
    assert report.warnings == ["the report's JSON was wrapped in a code fence"]


def test_r4_a_fence_opened_on_the_marker_line_is_read() -> None:
    log = (
        'TASK_RESULT: ```json\n{"success": false, "failure_reason": "platform"}\n```\n'
        "TASK_RESULT_END\n"
    )
    assert read(log).report.state is ReportState.FAILURE


def test_r4_an_unclosed_fence_is_unreadable() -> None:
    log = 'TASK_RESULT:\n```json\n{"success": true}\nTASK_RESULT_END\n'
    assert read(log).report.state is ReportState.UNREADABLE


def test_r4_an_unfenced_body_has_no_fence_warning() -> None:
    assert read(report_block(SUCCESS)).report.warnings == []


# -- R10 states --------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "state"),
    [
        (report_block(SUCCESS), ReportState.SUCCESS),
        (report_block(FAILURE), ReportState.FAILURE),
        (report_block('{"success": "true"}'), ReportState.UNREADABLE),
        ("no marker anywhere\n", ReportState.NOT_REPORTED),
        ("", ReportState.NOT_REPORTED),
    ],
)
def test_r10_a_log_resolves_to_one_of_four_states(log: str, state: ReportState) -> None:
    assert read(log).report.state is state


# -- R11 strongest claim ------------------------------------------------------


@pytest.mark.parametrize(
    ("bodies", "state"),
    [
        ([SUCCESS, FAILURE], ReportState.FAILURE),
        ([FAILURE, SUCCESS], ReportState.FAILURE),
        (["not json", SUCCESS], ReportState.SUCCESS),
        ([SUCCESS, "not json"], ReportState.SUCCESS),
        (["not json", FAILURE, SUCCESS], ReportState.FAILURE),
    ],
)
def test_r11_the_strongest_claim_stands_whatever_the_order(
    bodies: list[str], state: ReportState
) -> None:
    assert read("".join(report_block(body) for body in bodies)).report.state is state


def test_r11_a_later_success_never_takes_back_a_failure() -> None:
    log = report_block(FAILURE) + "Actually it worked after all.\n" + report_block(SUCCESS)
    report = read(log).report
    assert report.state is ReportState.FAILURE
    assert report.success is False


def test_r11_among_equals_the_first_one_stands() -> None:
    log = report_block('{"success": true, "comments": "first"}') + report_block(
        '{"success": true, "comments": "second"}'
    )
    assert read(log).report.comments == "first"


def test_r11_several_reports_are_noted_in_the_warnings() -> None:
    log = report_block(SUCCESS) + report_block(FAILURE)
    assert read(log).report.warnings == [
        "2 reports were written (1 failure, 1 success); the strongest stands"
    ]


# -- R12 streaming -------------------------------------------------------------


def test_r12_reading_the_same_log_twice_gives_the_same_verdict() -> None:
    log = "work\n" + report_block('{"success": true, "side_effects": "denied"}') + "bye\n"
    assert read(log) == read(log)
    assert read(log).report.side_effects is SideEffects.DENIED


def test_r12_the_verdict_can_be_asked_for_mid_stream_without_disturbing_the_reader() -> None:
    from agentjobs.contract.reading.transcript_reader import TranscriptReader

    reader = TranscriptReader()
    reader.feed(b'TASK_RESULT: {"success": true}\n')
    assert reader.verdict().report.state is ReportState.UNREADABLE  # as if it ended now
    reader.feed(b"TASK_RESULT_END\n")
    assert reader.verdict().report.state is ReportState.SUCCESS
    assert reader.close().report.state is ReportState.SUCCESS


def test_r12_a_closed_reader_takes_no_more_bytes() -> None:
    from agentjobs.contract.reading.transcript_reader import TranscriptReader

    reader = TranscriptReader()
    reader.close()
    with pytest.raises(ValueError, match="closed"):
        reader.feed(b"more")


# -- R13a last message (text) ---------------------------------------------------


def test_r13a_the_last_message_is_the_last_paragraph() -> None:
    log = "First paragraph.\n\nSecond paragraph,\nstill second.\n\n\n"
    assert read(log).last_message == "Second paragraph,\nstill second."


def test_r13a_report_lines_are_not_part_of_the_last_message() -> None:
    log = "Summary of the work.\n" + report_block(SUCCESS) + "\n"
    assert read(log).last_message == "Summary of the work."


def test_r13a_text_after_the_report_is_the_last_message() -> None:
    log = "Summary.\n" + report_block(SUCCESS) + "Goodbye for now.\n"
    assert read(log).last_message == "Goodbye for now."


def test_r13a_whitespace_only_lines_and_ansi_only_lines_separate_paragraphs() -> None:
    log = "one\n   \ntwo\n\x1b[0m\nthree\n"
    assert read(log).last_message == "three"


def test_r13a_a_log_without_prose_has_no_last_message() -> None:
    assert read(report_block(SUCCESS)).last_message is None


def test_r13a_the_last_message_keeps_only_the_last_64_kib() -> None:
    long_line = "word " * 30_000
    verdict = read(long_line + "\n")
    assert verdict.last_message is not None
    assert len(verdict.last_message.encode()) <= report_reader.LAST_MESSAGE_LIMIT
    assert long_line.rstrip().endswith(verdict.last_message.rstrip())
