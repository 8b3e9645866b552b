"""The kstatus conditions beside the four of old: Reconciling, Stalled and Ready.

Cases: each status sets them with kstatus's abnormal-true polarity (Reconciling while
pending or running, Stalled once ended without completing, Ready once completed); the
four of old are unchanged; no event is owed for a kstatus condition alone; kstatus's own
rules (its status.Compute, built by devcluster) read them as InProgress while pending or
running, Current once completed, Failed once ended otherwise, and InProgress while a spec
change is not yet observed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.kube import conditions
from tests import kstatus

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


@pytest.mark.parametrize("status", ["pending", "running", "completed", "failed"])
def test_only_a_true_condition_carries_the_message(status: str) -> None:
    summary = "the agent's summary, " * 100
    made = conditions.conditions_for(status, message=summary, previous=[], generation=1, now=NOW)
    assert {c.type for c in made if c.message} == _true_types(status)
    assert all(c.message in ("", summary) for c in made)


def test_kstatus_conditions_post_no_events_of_their_own() -> None:
    running = conditions.conditions_for("running", message="", previous=[], generation=1, now=NOW)
    assert conditions.changed_types([], running) == ["Running"]
    failed = conditions.conditions_for(
        "failed", message="", previous=running, generation=1, now=NOW
    )
    assert conditions.changed_types(running, failed) == ["Failed", "Finished"]


def _execution(status: str, *, generation: int = 1, observed: int = 1) -> dict[str, Any]:
    made = conditions.conditions_for(status, message="m", previous=[], generation=observed, now=NOW)
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "fix", "namespace": "team-a", "generation": generation},
        "status": {
            "status": status,
            "observedGeneration": observed,
            "conditions": [c.model_dump(mode="json", by_alias=True) for c in made],
        },
    }


def test_kstatus_reads_each_status_as_an_ended_or_progressing_resource() -> None:
    # An ended Execution is not in progress: only completed is Current, the rest Failed.
    statuses = {
        "pending": "InProgress",
        "running": "InProgress",
        "completed": "Current",
        "failed": "Failed",
        "cancelled": "Failed",
        "interrupted": "Failed",
    }
    verdicts = kstatus.compute([_execution(status) for status in statuses])
    assert [status for status, _ in verdicts] == list(statuses.values())


def test_kstatus_reads_a_spec_change_not_yet_seen_as_in_progress() -> None:
    ((status, message),) = kstatus.compute([_execution("completed", generation=2)])
    assert (status, message) == (
        "InProgress",
        "Execution generation is 2, but latest observed generation is 1",
    )


def test_r73_queued_is_kept_by_every_status_write_and_keeps_its_transition_time() -> None:
    later = NOW.replace(hour=13)
    base = conditions.conditions_for("running", message="m", previous=[], generation=1, now=NOW)
    queued = conditions.with_condition(
        base,
        conditions.QUEUED,
        true=True,
        reason="SchedulingGated",
        message="g",
        generation=1,
        now=NOW,
    )
    assert conditions.is_true(queued, conditions.QUEUED)
    assert conditions.released_at(queued) is None
    rewritten = conditions.conditions_for(
        "running", message="other", previous=queued, generation=2, now=later
    )
    assert [c.type for c in rewritten] == [*conditions.CONDITION_TYPES, conditions.QUEUED]
    # Still true: the same condition, its time unchanged.
    again = conditions.with_condition(
        rewritten,
        conditions.QUEUED,
        true=True,
        reason="SchedulingGated",
        message="g",
        generation=2,
        now=later,
    )
    assert next(c for c in again if c.type == conditions.QUEUED).last_transition_time == NOW
    released = conditions.with_condition(
        again,
        conditions.QUEUED,
        true=False,
        reason="Ungated",
        message="gone",
        generation=2,
        now=later,
    )
    assert not conditions.is_true(released, conditions.QUEUED)
    assert conditions.released_at(released) == later
    assert [c.type for c in released] == [c.type for c in again]
