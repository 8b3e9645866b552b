"""A grader's GRADE_RESULT block, read from its log (R39, with R1-R4, R12, R13c-R13f).

Cases: the block framed as a report (line start, ANSI stripped, fence with a
warning, the terminator on the next line, end of stream and a new marker
leave it unreadable, the 1 MiB cap); `result` exactly one of three strings;
`explanation` a string or null with a warning; criteria items kept or
dropped with a warning; usage under the seed's names; the strongest block
stands (failed > needs_revision > satisfied > unreadable); a TASK_RESULT is
not a grade; in agent-CLI transcripts only the grader's words count, and the
CLI's error and usage are read.
"""

from __future__ import annotations

import json

import pytest

from agentjobs.contract.reading import report_reader
from agentjobs.contract.reading.grade_reader import GradeReader, GradeVerdict
from agentjobs.models.contract import (
    Criterion,
    FailureKind,
    GradeState,
    TranscriptFormat,
    Usage,
)
from tests.unit import agent_cli_events as cli


def grade_log(body: str) -> str:
    return f"GRADE_RESULT: {body}\nGRADE_RESULT_END\n"


def read_grade(log: str | bytes, fmt: TranscriptFormat = TranscriptFormat.TEXT) -> GradeVerdict:
    reader = GradeReader(fmt)
    reader.feed(log.encode() if isinstance(log, str) else log)
    return reader.close()


SATISFIED = '{"result": "satisfied", "explanation": "all met"}'


# -- framing, as R1-R4 ---------------------------------------------------------


def test_r39_a_block_at_a_line_start_is_read() -> None:
    grade = read_grade("checking the files\n" + grade_log(SATISFIED)).grade
    assert grade.state is GradeState.SATISFIED
    assert grade.explanation == "all met"
    assert grade.warnings == []


def test_r39_a_marker_in_the_middle_of_a_line_is_prose() -> None:
    log = f"I will print GRADE_RESULT: {SATISFIED}\nGRADE_RESULT_END\n"
    assert read_grade(log).grade.state is GradeState.NOT_REPORTED


def test_r39_ansi_codes_are_stripped_before_the_marker_is_looked_for() -> None:
    log = f"\x1b[1;32mGRADE_\x1b[0mRESULT:\x1b[0m {SATISFIED}\n\x1b[2mGRADE_RESULT_END\x1b[0m\n"
    assert read_grade(log).grade.state is GradeState.SATISFIED


def test_r39_a_fenced_pretty_printed_body_is_read_with_a_warning() -> None:
    body = json.dumps({"result": "needs_revision", "explanation": "two gaps"}, indent=2)
    log = f"  GRADE_RESULT:\n```json\n{body}\n```\nGRADE_RESULT_END\n"
    grade = read_grade(log).grade
    assert grade.state is GradeState.NEEDS_REVISION
    assert grade.warnings == ["the grade's JSON was wrapped in a code fence"]


def test_r39_a_block_cut_by_the_end_of_the_stream_is_unreadable() -> None:
    grade = read_grade(f"GRADE_RESULT: {SATISFIED}\n").grade
    assert grade.state is GradeState.UNREADABLE
    assert grade.warnings[0] == "unreadable grade: the stream ended before GRADE_RESULT_END"


def test_r39_a_new_marker_closes_the_open_block_as_unreadable() -> None:
    log = 'GRADE_RESULT: {"result": "failed",\n' + grade_log(SATISFIED)
    verdict = read_grade(log)
    assert verdict.grade.state is GradeState.SATISFIED
    assert verdict.grade.warnings[-1] == (
        "2 grades were written (1 satisfied, 1 unreadable); the strongest stands"
    )


def test_r39_a_body_over_the_cap_is_unreadable() -> None:
    padding = "x" * report_reader.BODY_LIMIT
    body = f'{{"result": "satisfied", "explanation": "{padding}"}}'
    grade = read_grade(grade_log(body)).grade
    assert grade.state is GradeState.UNREADABLE
    assert "over" in grade.warnings[0]


def test_r39_a_task_result_is_not_a_grade() -> None:
    log = 'TASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    assert read_grade(log).grade.state is GradeState.NOT_REPORTED


# -- the object ----------------------------------------------------------------


@pytest.mark.parametrize(
    "result", ['"Satisfied"', '"passed"', '"needs revision"', "true", "null", "1", '["failed"]']
)
def test_r39_a_result_that_is_not_one_of_the_three_words_is_unreadable(result: str) -> None:
    grade = read_grade(grade_log(f'{{"result": {result}, "explanation": "x"}}')).grade
    assert grade.state is GradeState.UNREADABLE
    assert "`result`" in grade.warnings[0]


def test_r39_a_missing_result_is_unreadable() -> None:
    grade = read_grade(grade_log('{"explanation": "looks fine"}')).grade
    assert grade.state is GradeState.UNREADABLE
    assert "`result` is missing" in grade.warnings[0]


@pytest.mark.parametrize("body", ['"satisfied"', "[]", '{"result": "satisfied", "result": "x"}'])
def test_r39_a_body_that_is_not_one_object_with_unique_keys_is_unreadable(body: str) -> None:
    assert read_grade(grade_log(body)).grade.state is GradeState.UNREADABLE


@pytest.mark.parametrize("explanation", [None, 3, ["a"]])
def test_r39_an_explanation_that_is_not_a_string_is_null_with_a_warning(
    explanation: object,
) -> None:
    fields: dict[str, object] = {"result": "failed"}
    if explanation is not None:
        fields["explanation"] = explanation
    grade = read_grade(grade_log(json.dumps(fields))).grade
    assert grade.state is GradeState.FAILED
    assert grade.explanation is None
    assert "`explanation` recorded as null" in grade.warnings[0]


def test_r39_well_formed_criteria_are_kept_and_malformed_ones_dropped_with_a_warning() -> None:
    criteria = [
        {"name": "coverage", "met": True},
        {"name": "links", "met": False, "feedback": "two links are dead"},
        {"name": "tone", "met": False, "feedback": None},
        {"name": "dates", "met": "no"},
        {"met": False},
        {"name": "style", "met": False, "feedback": 7},
        "format",
    ]
    body = json.dumps({"result": "needs_revision", "explanation": "x", "criteria": criteria})
    grade = read_grade(grade_log(body)).grade
    assert grade.state is GradeState.NEEDS_REVISION
    assert grade.criteria == [
        Criterion(name="coverage", met=True),
        Criterion(name="links", met=False, feedback="two links are dead"),
        Criterion(name="tone", met=False),
    ]
    dropped = [w for w in grade.warnings if "dropped" in w]
    assert [w.split("`")[1] for w in dropped] == [f"criteria[{i}]" for i in (3, 4, 5, 6)]


def test_r39_criteria_that_are_not_a_list_are_dropped_with_a_warning() -> None:
    body = '{"result": "satisfied", "explanation": "x", "criteria": {"a": true}}'
    grade = read_grade(grade_log(body)).grade
    assert grade.state is GradeState.SATISFIED
    assert grade.criteria == []
    assert "`criteria` dropped: it is an object, not an array" in grade.warnings


def test_r39_a_satisfied_grade_with_an_unmet_criterion_stands_with_a_warning() -> None:
    body = json.dumps(
        {"result": "satisfied", "explanation": "x", "criteria": [{"name": "a", "met": False}]}
    )
    grade = read_grade(grade_log(body)).grade
    assert grade.state is GradeState.SATISFIED
    assert any("unmet criteria: a" in w for w in grade.warnings)


def test_r39_usage_is_read_under_the_seed_names() -> None:
    usage = {
        "input_tokens": 2400,
        "output_tokens": 350,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 1800,
    }
    body = json.dumps({"result": "satisfied", "explanation": "x", "usage": usage})
    verdict = read_grade(grade_log(body))
    expected = Usage(
        input_tokens=2400,
        output_tokens=350,
        cache_creation_input_tokens=0,
        cache_read_input_tokens=1800,
    )
    assert verdict.grade.usage == expected
    assert verdict.usage == expected
    assert verdict.grade.warnings == []


def test_r39_a_bad_usage_count_or_name_is_dropped_with_a_warning() -> None:
    usage = {"input_tokens": -1, "output_tokens": 2.5, "cache_read_input_tokens": True, "n": 1}
    body = json.dumps({"result": "satisfied", "explanation": "x", "usage": usage})
    grade = read_grade(grade_log(body)).grade
    assert grade.usage is None
    assert len(grade.warnings) == 4
    body = json.dumps({"result": "satisfied", "explanation": "x", "usage": [1]})
    assert read_grade(grade_log(body)).grade.warnings == [
        "`usage` dropped: it is an array, not an object"
    ]


# -- the strongest block -------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "stands"),
    [
        ("satisfied", "failed", GradeState.FAILED),
        ("failed", "satisfied", GradeState.FAILED),
        ("satisfied", "needs_revision", GradeState.NEEDS_REVISION),
        ("needs_revision", "satisfied", GradeState.NEEDS_REVISION),
        ("needs_revision", "failed", GradeState.FAILED),
        ("bogus", "satisfied", GradeState.SATISFIED),
        ("satisfied", "bogus", GradeState.SATISFIED),
    ],
)
def test_r39_the_strongest_block_stands_whatever_the_order(
    first: str, second: str, stands: GradeState
) -> None:
    log = grade_log(f'{{"result": "{first}", "explanation": "one"}}') + grade_log(
        f'{{"result": "{second}", "explanation": "two"}}'
    )
    assert read_grade(log).grade.state is stands


def test_r39_among_equals_the_first_block_stands() -> None:
    log = grade_log('{"result": "satisfied", "explanation": "one"}') + grade_log(
        '{"result": "satisfied", "explanation": "two"}'
    )
    assert read_grade(log).grade.explanation == "one"


def test_r12_the_grade_mid_stream_does_not_end_the_stream() -> None:
    reader = GradeReader()
    reader.feed(f"GRADE_RESULT: {SATISFIED}\n".encode())
    assert reader.verdict().grade.state is GradeState.UNREADABLE
    reader.feed(b"GRADE_RESULT_END\n")
    assert reader.verdict().grade.state is GradeState.SATISFIED
    assert reader.close().grade.state is GradeState.SATISFIED


# -- agent-CLI transcripts (R13b-R13f) -----------------------------------------


def test_r13c_a_grade_in_a_claude_code_message_is_read_and_usage_comes_from_the_cli() -> None:
    log = cli.claude_text(grade_log(SATISFIED)) + cli.claude_result(
        "done", usage={"input_tokens": 10, "output_tokens": 4}
    )
    verdict = read_grade(log, TranscriptFormat.CLAUDE_CODE)
    assert verdict.grade.state is GradeState.SATISFIED
    assert verdict.terminal_event_seen
    assert verdict.usage is not None
    assert verdict.usage.input_tokens == 10


def test_r13c_a_grade_printed_by_a_tool_is_not_the_graders() -> None:
    log = cli.codex_command(grade_log(SATISFIED)) + cli.codex_completed(input_tokens=1)
    verdict = read_grade(log, TranscriptFormat.CODEX)
    assert verdict.grade.state is GradeState.NOT_REPORTED
    assert verdict.terminal_event_seen


def test_r13e_the_graders_cli_error_is_read_and_classified() -> None:
    log = cli.codex_message(grade_log(SATISFIED)) + cli.codex_failed("429 rate limit reached")
    verdict = read_grade(log, TranscriptFormat.JSONL)
    assert verdict.grade.state is GradeState.SATISFIED
    assert verdict.grader_cli_error is not None
    assert verdict.grader_cli_error.kind is FailureKind.RATE_LIMIT


def test_r39_the_blocks_own_usage_stands_over_the_clis() -> None:
    body = '{"result": "satisfied", "explanation": "x", "usage": {"output_tokens": 9}}'
    log = cli.gemini_delta(grade_log(body)) + cli.gemini_result(
        stats={"input_tokens": 100, "output_tokens": 50}
    )
    verdict = read_grade(log, TranscriptFormat.GEMINI_CLI)
    assert verdict.grade.state is GradeState.SATISFIED
    assert verdict.usage == Usage(output_tokens=9)
