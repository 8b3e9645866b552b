"""Agent output that used to crash the reader or what turns its verdict into a status.

Cases: a lone UTF-16 surrogate in a report's comments, a blocker, the last
message, a CLI's error (long enough to be cut) and a CLI's final text; a
JSON event whose ``type`` is a list, an object or a number in ``jsonl``
recognition and in each CLI's decoder; events and contents that are lists
where objects are expected; nesting deeper than the JSON parser goes; token
counts beyond int64 and costs of infinity, clamped or dropped, and sums that
stay within int64; a grade with surrogates and huge counts; the Phase status
built from such a verdict serialises as JSON.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading import report_body
from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.contract.resolution import resolution
from agentjobs.contract.text import agent_text, usage
from agentjobs.models.contract import ReportState, TranscriptFormat, Usage
from agentjobs.models.resource_status import PhaseResourceStatus
from tests.unit.reading import read, report_block

SURROGATE = "\\ud83d"  # as JSON writes it: half of an emoji
FORMATS = list(TranscriptFormat)
EVENT_FORMATS = [f for f in TranscriptFormat if f is not TranscriptFormat.TEXT]


def encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_a_lone_surrogate_in_comments_is_replaced() -> None:
    verdict = read(report_block(f'{{"success": true, "comments": "done {SURROGATE}!"}}'))
    assert verdict.report.comments == "done \ufffd!"
    assert report_body.comments_for_status(verdict.report.comments) == "done \ufffd!"


def test_a_lone_surrogate_in_a_blocker_is_replaced() -> None:
    body = (
        '{"success": false, "failure_reason": "task", "blockers": '
        f'[{{"type": "x{SURROGATE}", "message": "{"m" * 2000}{SURROGATE}", "recoverable": true}}]}}'
    )
    blockers = read(report_block(body)).report.blockers
    assert blockers is not None
    assert blockers[0].type == "x\ufffd"
    assert len(blockers[0].message.encode()) <= agent_text.SHORT_TEXT_BYTES


def test_a_cli_error_cut_inside_a_surrogate_is_a_verdict() -> None:
    event = f'{{"type":"result","is_error":true,"result":"{"a" * 1023}{SURROGATE}tail"}}\n'
    verdict = read(event, TranscriptFormat.CLAUDE_CODE)
    assert verdict.agent_cli_error is not None
    assert verdict.agent_cli_error.message.encode() == b"a" * 1023


def test_a_lone_surrogate_in_a_final_text_and_last_message_is_replaced() -> None:
    log = (
        f'{{"type":"assistant","message":{{"id":"m1","content":[{{"type":"text",'
        f'"text":"I fixed it {SURROGATE}"}}]}}}}\n'
        f'{{"type":"result","subtype":"success","result":"all done {SURROGATE}"}}\n'
    )
    verdict = read(log, TranscriptFormat.CLAUDE_CODE)
    assert verdict.last_message == "all done \ufffd"


@pytest.mark.parametrize("event_type", ['["x"]', '{"a": 1}', "3", "null", "true"])
@pytest.mark.parametrize("transcript_format", EVENT_FORMATS)
def test_an_event_whose_type_is_not_a_string_carries_no_words(
    event_type: str, transcript_format: TranscriptFormat
) -> None:
    log = (
        f'{{"type": {event_type}, "part": {{}}, "msg": {{"type": {event_type}}}, "id": 1}}\n'
        '{"type": "result", "result": "ok"}\n'
    )
    verdict = read(log, transcript_format)
    assert verdict.report.state is ReportState.NOT_REPORTED


@pytest.mark.parametrize("transcript_format", EVENT_FORMATS)
def test_lists_where_objects_are_expected_carry_no_words(
    transcript_format: TranscriptFormat,
) -> None:
    log = (
        '{"type":"assistant","message":[1],"part":[2],"item":[3],"msg":[4],"error":[5]}\n'
        '{"type":"item.completed","item":{"type":"agent_message","text":["x"]}}\n'
        '{"type":"text","part":{"text":{"a":1},"messageID":[1]}}\n'
        '{"type":"result","usage":[1],"stats":[2],"error":[3],"status":"error"}\n'
        '{"type":"step_finish","part":{"tokens":[1],"reason":"stop"}}\n'
        '{"type":"turn.failed","error":[1],"usage":"many"}\n'
    )
    verdict = read(log, transcript_format)
    assert verdict.report.state is ReportState.NOT_REPORTED


@pytest.mark.parametrize("transcript_format", FORMATS)
def test_nesting_deeper_than_the_parser_goes_is_not_a_crash(
    transcript_format: TranscriptFormat,
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    log = f'{{"type": "message", "content": {deep}}}\n' + report_block(
        f'{{"success": true, "comments": {deep}}}'
    )
    verdict = read(log, transcript_format)
    assert verdict.report.state in (ReportState.UNREADABLE, ReportState.NOT_REPORTED)


def test_token_counts_beyond_int64_are_clamped() -> None:
    huge = 10**30
    event = (
        f'{{"type":"result","subtype":"success","result":"ok","total_cost_usd": 1e999,'
        f'"usage":{{"input_tokens":{huge},"output_tokens":{2**63}}}}}\n'
    )
    spent = read(event, TranscriptFormat.CLAUDE_CODE).usage
    assert spent == Usage(input_tokens=agent_text.MAX_COUNT, output_tokens=agent_text.MAX_COUNT)


def test_summed_counts_stay_within_int64() -> None:
    most = Usage(input_tokens=agent_text.MAX_COUNT, cost_usd=agent_text.MAX_COST)
    summed = usage.add(most, most)
    assert summed is not None
    assert summed.input_tokens == agent_text.MAX_COUNT
    assert summed.cost_usd == agent_text.MAX_COST


def test_running_totals_beyond_int64_give_no_negative_growth() -> None:
    log = (
        f'{{"id":"1","msg":{{"type":"token_count","info":{{"total_token_usage":'
        f'{{"input_tokens":{10**40},"output_tokens":5}}}}}}}}\n'
        '{"id":"2","msg":{"type":"task_complete","last_agent_message":"done"}}\n'
    )
    spent = read(log, TranscriptFormat.CODEX).usage
    assert spent is not None and spent.input_tokens == agent_text.MAX_COUNT


def test_a_grade_with_surrogates_and_huge_counts_is_read() -> None:
    body = {
        "result": "needs_revision",
        "explanation": "see \ud83d",
        "criteria": [{"name": "n\ud83d", "met": False, "feedback": "f\ud83d"}],
        "usage": {"input_tokens": 10**25},
    }
    reader = GradeReader()
    reader.feed(f"GRADE_RESULT: {json.dumps(body)}\nGRADE_RESULT_END\n".encode())
    grade = reader.close().grade
    assert grade.explanation == "see \ufffd"
    assert grade.criteria[0].name == "n\ufffd"
    assert grade.criteria[0].feedback == "f\ufffd"
    assert grade.usage == Usage(input_tokens=agent_text.MAX_COUNT)
    assert all(encodes(warning) for warning in grade.warnings)


def test_a_status_from_a_hostile_verdict_serialises() -> None:
    log = (
        '{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":'
        f'"TASK_RESULT: {{\\"success\\": true, \\"comments\\": \\"c{SURROGATE}\\"}}\\n'
        'TASK_RESULT_END\\nI wrote the fix and the tests for the parser module today."}]}}\n'
        f'{{"type":"result","is_error":true,"result":"e{SURROGATE}",'
        f'"usage":{{"input_tokens":{10**20}}}}}\n'
    )
    verdict = read(log, TranscriptFormat.CLAUDE_CODE)
    run = resolution.RunFacts(
        exit_code=0, stream_intact=True, agent_cli_error=verdict.agent_cli_error
    )
    now = datetime.now(UTC)
    result = phase.resolve_phase(
        report=verdict.report,
        run=run,
        output=[],
        recovery=RecoveryContext(phase_name="p", last_message=verdict.last_message),
        now=now,
    )
    status = phase_status.finished(
        PhaseResourceStatus(),
        verdict=verdict,
        run=run,
        result=result,
        stored={},
        generation=1,
        now=now,
    )
    status.model_dump_json(by_alias=True).encode("utf-8")
