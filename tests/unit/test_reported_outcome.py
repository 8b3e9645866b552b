"""R36a: what the agent says of its own outcome (`blockers`, `confidence`,
`needs_user_action`) and the agent-sourced `taskOutcome`.

Cases: the three keys are read; at most 20 blockers, strings cut at 1 KiB,
a malformed item dropped with a warning; a confidence outside 0-1 or of
another type and a non-boolean `needs_user_action` are null with a
warning; `failure_reason` platform gives `blocked`, task and refused
`failed`, unknown or none `unknown`; `needs_user_action` defaults to true
for task and refused; the agent's blockers and confidence are in the
outcome; none of it changes the phase's status or classification.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.reading import report_body
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.models.contract import (
    Blocker,
    FailureClassification,
    PhaseStatus,
    Report,
    ReportState,
    TaskOutcomeStatus,
)
from tests.unit.reading import read, report_block

NOW = datetime(2026, 12, 1, 10, tzinfo=UTC)
BLOCKER = {"type": "credentials", "message": "no token for the registry", "recoverable": True}


def body(**fields: Any) -> Report:
    return report_body.read_report_body(json.dumps(fields), warnings=[])


def test_r36a_blockers_confidence_and_needs_user_action_are_read_from_the_log() -> None:
    text = json.dumps(
        {
            "success": False,
            "failure_reason": "platform",
            "blockers": [BLOCKER],
            "confidence": 0.8,
            "needs_user_action": True,
        }
    )
    report = read(report_block(text)).report
    assert report.blockers == [Blocker(**BLOCKER)]
    assert (report.confidence, report.needs_user_action) == (0.8, True)
    assert report.warnings == []


def test_r36a_without_the_keys_nothing_is_reported() -> None:
    report = body(success=True)
    assert (report.blockers, report.confidence, report.needs_user_action) == (None, None, None)


def test_r36a_at_most_twenty_blockers_with_strings_cut_at_one_kib() -> None:
    long = {"type": "t" * 2000, "message": "é" * 1000, "recoverable": False}
    report = body(success=False, failure_reason="task", blockers=[long] * 25)
    assert report.blockers is not None and len(report.blockers) == 20
    assert report.blockers[0].type == "t" * 1024
    assert report.blockers[0].message == "é" * 512
    assert report.warnings == ["`blockers` cut to the first 20 of 25"]


@pytest.mark.parametrize(
    "item",
    [
        "a string",
        {"type": "x", "message": "y"},
        {"type": 1, "message": "y", "recoverable": True},
        {"type": "x", "message": "y", "recoverable": "yes"},
    ],
)
def test_r36a_a_malformed_blocker_is_dropped_with_a_warning(item: object) -> None:
    report = body(success=True, blockers=[item, BLOCKER])
    assert report.blockers == [Blocker(**BLOCKER)]
    assert report.warnings[0].startswith("`blockers[0]` dropped")


def test_r36a_blockers_that_are_not_a_list_are_dropped() -> None:
    report = body(success=True, blockers={"type": "x"})
    assert report.blockers is None
    assert report.warnings == ["`blockers` dropped: it is an object, not an array"]


@pytest.mark.parametrize("value", [1.5, -0.1, "0.9", True, None])
def test_r36a_a_confidence_that_is_not_a_number_from_0_to_1_is_null(value: object) -> None:
    report = body(success=True, confidence=value)
    assert report.confidence is None
    assert report.warnings[0].startswith("`confidence` recorded as null")
    assert report.state is ReportState.SUCCESS


@pytest.mark.parametrize("value", [0, 1, 0.25])
def test_r36a_a_confidence_from_0_to_1_is_kept(value: float) -> None:
    assert body(success=True, confidence=value).confidence == value


def test_r36a_a_needs_user_action_that_is_not_a_boolean_is_null() -> None:
    report = body(success=True, needs_user_action="yes")
    assert report.needs_user_action is None
    assert report.warnings == ["`needs_user_action` recorded as null: it is a string"]


def resolved(report: Report) -> phase.PhaseResult:
    return phase.resolve_phase(
        report=report,
        run=RunFacts(exit_code=0, stream_intact=True),
        output=None,
        recovery=RecoveryContext(phase_name="p", last_message=None),
        now=NOW,
    )


@pytest.mark.parametrize(
    ("reason", "status", "needs_user_action", "classification"),
    [
        ("platform", TaskOutcomeStatus.BLOCKED, False, FailureClassification.CORRECT_REFUSAL),
        ("task", TaskOutcomeStatus.FAILED, True, FailureClassification.CORRECT_REFUSAL),
        ("refused", TaskOutcomeStatus.FAILED, True, FailureClassification.CORRECT_REFUSAL),
        ("unknown", TaskOutcomeStatus.UNKNOWN, False, FailureClassification.UNCLASSIFIED),
        ("a sentence", TaskOutcomeStatus.UNKNOWN, False, FailureClassification.CORRECT_REFUSAL),
    ],
)
def test_r36a_the_failure_reason_gives_the_agents_outcome_and_leaves_the_phase_alone(
    reason: str,
    status: TaskOutcomeStatus,
    needs_user_action: bool,
    classification: FailureClassification,
) -> None:
    result = resolved(body(success=False, failure_reason=reason))
    outcome = result.task_outcome
    assert (outcome.status, outcome.needs_user_action) == (status, needs_user_action)
    assert (result.status, result.failure_classification) == (PhaseStatus.FAILED, classification)
    assert outcome.blockers[0].recoverable is (reason == "platform")


def test_r36a_the_agents_own_keys_go_into_the_outcome() -> None:
    report = body(
        success=False,
        failure_reason="task",
        blockers=[BLOCKER],
        confidence=0.3,
        needs_user_action=False,
    )
    outcome = resolved(report).task_outcome
    assert outcome.blockers == [Blocker(**BLOCKER)]
    assert (outcome.confidence, outcome.needs_user_action) == (0.3, False)


def test_r36a_a_success_keeps_its_blockers_before_the_side_effects_one() -> None:
    report = body(success=True, side_effects="denied", blockers=[BLOCKER], confidence=1)
    result = resolved(report)
    outcome = result.task_outcome
    assert result.status is PhaseStatus.COMPLETED
    assert outcome.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert [blocker.type for blocker in outcome.blockers] == ["credentials", "side_effects"]
    assert outcome.confidence == 1.0
