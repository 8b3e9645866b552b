"""R55/R56: agent-provided text made safe for statuses, Events and terminals.

Cases: ESC/OSC sequences, BEL, NUL, backspace, carriage return, DEL, C1 controls and
every bidirectional control are removed; line feed and tab stay; a lone surrogate
becomes U+FFFD; ordinary text (accents, emoji, CJK) is kept as it is; a cut never
splits a character, counts a surrogate as U+FFFD and keeps short text; counts clamp
to int64 and costs drop NaN and infinities; and at the reading boundary: a report's
comments, blockers and warnings, the last message, a CLI's error, a grade's
explanation, criteria and warnings come out of the readers cleaned.
"""

from __future__ import annotations

import json

import pytest

from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import TranscriptFormat
from tests.unit.reading import read, report_block

HOSTILE = (
    "a\x1b]0;pwned\x07b\x1b[31mc\x00d\x08e\rf\x7fg\x85h\x9bi"
    "\u202ej\u202ak\u2066l\u2069m\u200en\u200fo\u061cp"
)
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_terminal_controls_and_bidi_overrides_are_removed() -> None:
    assert agent_text.clean(HOSTILE) == "a]0;pwnedb[31mcdefghijklmnop"


@pytest.mark.parametrize("char", [chr(c) for c in range(0x20) if c not in (9, 10)])
def test_every_c0_control_but_tab_and_line_feed_is_removed(char: str) -> None:
    assert agent_text.clean(f"x{char}y") == "xy"


@pytest.mark.parametrize("char", [chr(c) for c in range(0x7F, 0xA0)] + list(BIDI))
def test_del_c1_and_bidi_controls_are_removed(char: str) -> None:
    assert agent_text.clean(f"x{char}y") == "xy"


def test_line_feed_and_tab_stay() -> None:
    assert agent_text.clean("one\n\ttwo\n") == "one\n\ttwo\n"


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    assert agent_text.clean("x\ud83dy\udc00") == "x\ufffdy\ufffd"


def test_ordinary_text_is_kept() -> None:
    text = "Café, naïve, 日本語, emoji 😀, Ελληνικά, עברית, العربية"
    assert agent_text.clean(text) is text


def test_a_cut_never_splits_a_character() -> None:
    assert agent_text.cut("é" * 10, 5) == "éé"
    assert agent_text.cut("😀😀", 7) == "😀"


def test_a_cut_counts_a_surrogate_as_the_replacement_character() -> None:
    assert agent_text.cut("ab\ud83d" + "c" * 10, 5) == "ab\ufffd"
    assert agent_text.cut("ab\ud83d", 5) == "ab\ufffd"
    assert agent_text.cut("ab\ud83d", 100) == "ab\ufffd"


def test_a_short_text_is_not_cut() -> None:
    assert agent_text.cut("short", 100) == "short"


def test_counts_clamp_to_int64_and_costs_drop_nan_and_infinity() -> None:
    assert agent_text.count(10**30) == 2**63 - 1
    assert agent_text.count(-3) == 0
    assert agent_text.cost(float("inf")) is None
    assert agent_text.cost(float("nan")) is None
    assert agent_text.cost(10**400) == agent_text.MAX_COST
    assert agent_text.cost(1.5) == 1.5


def as_json(text: str) -> str:
    return json.dumps(text)


def test_a_report_comes_out_of_the_reader_cleaned() -> None:
    body = (
        f'{{"success": false, "failure_reason": "task", "comments": {as_json(HOSTILE)}, '
        f'"side_effects": {as_json(HOSTILE)}, '
        f'"blockers": [{{"type": {as_json(HOSTILE)}, "message": {as_json(HOSTILE)}, '
        '"recoverable": false}]}'
    )
    report = read(report_block(body)).report
    assert report.comments == agent_text.clean(HOSTILE)
    assert report.blockers is not None
    assert report.blockers[0].type == report.blockers[0].message == agent_text.clean(HOSTILE)
    assert all(warning == agent_text.clean(warning) for warning in report.warnings)


def test_a_cli_error_and_the_last_message_come_out_cleaned() -> None:
    log = (
        '{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":'
        f"{as_json('I did it ' + HOSTILE)}}}]}}}}\n"
        f'{{"type":"result","is_error":true,"result":{as_json(HOSTILE)}}}\n'
    )
    verdict = read(log, TranscriptFormat.CLAUDE_CODE)
    assert verdict.agent_cli_error is not None
    assert verdict.agent_cli_error.message == agent_text.clean(HOSTILE)
    assert verdict.last_message is not None
    assert verdict.last_message == agent_text.clean(verdict.last_message)
    assert verdict.last_message.endswith("cdefghijklmnop")


def test_a_text_log_last_message_comes_out_cleaned() -> None:
    verdict = read("done\x07 \u202eevil\x00\n")
    assert verdict.last_message == "done evil"


def test_a_grade_comes_out_of_the_reader_cleaned() -> None:
    body = {
        "result": "needs_revision",
        "explanation": HOSTILE,
        "criteria": [{"name": HOSTILE, "met": False, "feedback": HOSTILE}],
        "usage": {HOSTILE: 1},
    }
    reader = GradeReader()
    reader.feed(f"GRADE_RESULT: {json.dumps(body)}\nGRADE_RESULT_END\n".encode())
    grade = reader.close().grade
    assert grade.explanation == agent_text.clean(HOSTILE)
    assert grade.criteria[0].name == grade.criteria[0].feedback == agent_text.clean(HOSTILE)
    assert grade.warnings and all(w == agent_text.clean(w) for w in grade.warnings)
