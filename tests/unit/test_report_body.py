"""What a report's JSON says (R5-R9).

Cases: `success` must be a JSON boolean and top-level keys unique (R5); the
legacy `status` (R6); `failure_reason` words (R7); `side_effects` words (R8);
`comments` kept verbatim and cut to 4 KiB for a CR status (R9).
"""

from __future__ import annotations

import pytest

from agentjobs.contract.reading import report_body
from agentjobs.models.contract import FailureReason, Report, ReportState, SideEffects
from tests.unit.reading import read, report_block


def body(text: str) -> Report:
    return read(report_block(text)).report


# -- R5 strict success -------------------------------------------------------


@pytest.mark.parametrize(
    "value", ['"true"', '"false"', "1", "0", "null", '"completed"', "[]", "{}"]
)
def test_r5_a_success_that_is_not_a_json_boolean_is_unreadable(value: str) -> None:
    report = body(f'{{"success": {value}}}')
    assert report.state is ReportState.UNREADABLE
    assert "not a JSON boolean" in report.warnings[0]


@pytest.mark.parametrize(("value", "state"), [("true", "success"), ("false", "failure")])
def test_r5_a_boolean_success_decides_the_state(value: str, state: str) -> None:
    assert body(f'{{"success": {value}}}').state.value == state


def test_r5_a_duplicate_top_level_key_is_unreadable() -> None:
    report = body('{"success": true, "success": true}')
    assert report.state is ReportState.UNREADABLE
    assert "written twice" in report.warnings[0]


def test_r5_any_duplicate_top_level_key_is_unreadable_not_only_success() -> None:
    assert body('{"success": true, "comments": "a", "comments": "b"}').state is (
        ReportState.UNREADABLE
    )


def test_r5_duplicates_inside_a_nested_object_do_not_matter() -> None:
    report = body('{"success": true, "extra": {"k": 1, "k": 2}}')
    assert report.state is ReportState.SUCCESS


@pytest.mark.parametrize("text", ["[true]", '"success"', "true"])
def test_r5_a_body_that_is_not_an_object_is_unreadable(text: str) -> None:
    assert body(text).state is ReportState.UNREADABLE


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_r5_non_json_constants_make_the_body_unreadable(constant: str) -> None:
    assert body(f'{{"success": true, "score": {constant}}}').state is ReportState.UNREADABLE


# -- R6 legacy status ---------------------------------------------------------


@pytest.mark.parametrize(("status", "state"), [("completed", "success"), ("failed", "failure")])
def test_r6_a_legacy_status_is_read_with_a_warning(status: str, state: str) -> None:
    report = body(f'{{"status": "{status}"}}')
    assert report.state.value == state
    assert any("legacy `status" in warning for warning in report.warnings)


@pytest.mark.parametrize("status", ['"Completed"', '"done"', '"success"', "true", "null"])
def test_r6_any_other_status_is_unreadable(status: str) -> None:
    assert body(f'{{"status": {status}}}').state is ReportState.UNREADABLE


def test_r6_a_status_written_twice_is_unreadable() -> None:
    assert body('{"status": "completed", "status": "completed"}').state is (ReportState.UNREADABLE)


def test_r6_status_is_ignored_when_success_is_a_boolean() -> None:
    report = body('{"success": false, "status": "completed", "failure_reason": "task"}')
    assert report.state is ReportState.FAILURE
    assert not any("legacy" in warning for warning in report.warnings)


def test_r6_a_status_never_rescues_an_unreadable_success() -> None:
    assert body('{"success": "yes", "status": "completed"}').state is ReportState.UNREADABLE


def test_r6_no_success_and_no_status_is_unreadable() -> None:
    assert body('{"comments": "finished"}').state is ReportState.UNREADABLE


# -- R7 failure_reason ---------------------------------------------------------


@pytest.mark.parametrize("reason", list(FailureReason))
def test_r7_each_of_the_four_words_is_kept(reason: FailureReason) -> None:
    report = body(f'{{"success": false, "failure_reason": "{reason.value}"}}')
    assert report.failure_reason is reason
    assert report.warnings == []


@pytest.mark.parametrize(
    "value", ['"Task"', '"the tests failed"', '"timeout"', "3", "null", '["task"]']
)
def test_r7_anything_else_is_null_with_a_warning_and_changes_nothing(value: str) -> None:
    report = body(f'{{"success": false, "failure_reason": {value}}}')
    assert report.state is ReportState.FAILURE
    assert report.failure_reason is None
    assert any("failure_reason` recorded as null" in warning for warning in report.warnings)


def test_r7_a_missing_failure_reason_is_null_with_a_warning() -> None:
    report = body('{"success": false}')
    assert report.failure_reason is None
    assert report.warnings


def test_r7_failure_reason_means_nothing_when_success_is_true() -> None:
    report = body('{"success": true, "failure_reason": "task"}')
    assert report.state is ReportState.SUCCESS
    assert report.failure_reason is None


# -- R8 side_effects -----------------------------------------------------------


@pytest.mark.parametrize("word", list(SideEffects))
def test_r8_each_of_the_four_words_is_kept(word: SideEffects) -> None:
    assert body(f'{{"success": true, "side_effects": "{word.value}"}}').side_effects is word


@pytest.mark.parametrize("value", ['"pushed"', '"None"', "false", "null"])
def test_r8_anything_else_is_not_reported_with_a_warning(value: str) -> None:
    report = body(f'{{"success": true, "side_effects": {value}}}')
    assert report.side_effects is None
    assert any("side_effects" in warning for warning in report.warnings)


def test_r8_side_effects_never_change_the_outcome() -> None:
    for word in ("failed", "denied", "bogus"):
        assert body(f'{{"success": true, "side_effects": "{word}"}}').state is ReportState.SUCCESS


def test_r8_missing_side_effects_are_not_reported_without_a_warning() -> None:
    report = body('{"success": true}')
    assert report.side_effects is None
    assert report.warnings == []


# -- R9 comments -----------------------------------------------------------------


def test_r9_comments_are_kept_verbatim() -> None:
    text = '  Opened PR #42 — with \\"quotes\\" and unicode ✓  '
    assert body(f'{{"success": true, "comments": "{text}"}}').comments == (
        '  Opened PR #42 — with "quotes" and unicode ✓  '
    )


@pytest.mark.parametrize("value", ["42", '["a"]', '{"a": 1}', "true"])
def test_r9_comments_that_are_not_a_string_are_null(value: str) -> None:
    assert body(f'{{"success": true, "comments": {value}}}').comments is None


def test_r9_comments_are_cut_to_4_kib_for_a_cr_status_on_a_character_boundary() -> None:
    comments = "é" * 3000  # 6000 bytes
    cut = report_body.comments_for_status(comments)
    assert cut is not None
    assert len(cut.encode()) <= 4096
    assert comments.startswith(cut)
    assert len(cut) == 2048


def test_r9_short_comments_are_not_cut() -> None:
    assert report_body.comments_for_status("short") == "short"
    assert report_body.comments_for_status(None) is None
