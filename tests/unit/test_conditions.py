"""The kstatus conditions beside the four of old: Reconciling, Stalled and Ready.

Cases: each status sets them with kstatus's abnormal-true polarity (Reconciling while
pending or running, Stalled once ended without completing, Ready once completed); the
four of old are unchanged; no event is owed for a kstatus condition alone.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentjobs.logic import conditions

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _true_types(status: str) -> set[str]:
    made = conditions.conditions_for(status, message="m", previous=[], generation=3, now=NOW)
    assert [c.type for c in made] == list(conditions.CONDITION_TYPES)
    assert all(c.observed_generation == 3 and c.reason == status.capitalize() for c in made)
    return {c.type for c in made if c.status == "True"}


@pytest.mark.parametrize(
    ("status", "true_types"),
    [
        ("pending", {"Reconciling"}),
        ("running", {"Running", "Reconciling"}),
        ("completed", {"Complete", "Finished", "Ready"}),
        ("failed", {"Failed", "Finished", "Stalled"}),
        ("cancelled", {"Finished", "Stalled"}),
        ("interrupted", {"Finished", "Stalled"}),
    ],
)
def test_each_status_sets_the_kstatus_conditions(status: str, true_types: set[str]) -> None:
    assert _true_types(status) == true_types


def test_kstatus_conditions_post_no_events_of_their_own() -> None:
    running = conditions.conditions_for("running", message="", previous=[], generation=1, now=NOW)
    assert conditions.changed_types([], running) == ["Running"]
    failed = conditions.conditions_for(
        "failed", message="", previous=running, generation=1, now=NOW
    )
    assert conditions.changed_types(running, failed) == ["Failed", "Finished"]
