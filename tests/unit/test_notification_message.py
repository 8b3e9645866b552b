"""R50: the CloudEvents 1.0 structured JSON body of an Execution's or a phase's end.

Cases: the envelope (specversion, type, source = the resource's API path, id
from the UID and the end, time = the end's time, subject, content types) as
the cloudevents package reads it back; `data` holds R23-R26 and `phases[]`
and `outcome` only with includeOutcome; a phase's event carries that phase's
verdict and its own outcome; the same status gives the same bytes (retries
and restarts send one body), another end another id; a hostile status (huge
strings, hundreds of blockers and phases) is cut to a small body; an event
without its end time is refused rather than stamped now.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from cloudevents.core.bindings import http as cloudevents_http
from cloudevents.core.formats.json import JSONFormat

from agentjobs.contract.notifications import message
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus

EXECUTION = message.ExecutionRef(namespace="team-a", name="release-notes", uid="0b5c-uid")
ENDED = datetime(2026, 12, 1, 12, 30, 5, tzinfo=UTC)
OUTCOME = {
    "status": "blocked",
    "source": "system",
    "summary": "The image could not be pulled: credentials were refused.",
    "blockers": [{"type": "auth", "message": "pull refused", "recoverable": True}],
    "needsUserAction": True,
    "terminalReason": "image_pull_auth",
    "reportedAt": "2026-12-01T12:30:05Z",
}


def execution_status(**extra: Any) -> ExecutionResourceStatus:
    return ExecutionResourceStatus.model_validate(
        {
            "status": "failed",
            "failureClassification": "platform",
            "reportedFailureReason": "platform",
            "deliverableProduced": True,
            "reportedSideEffects": "succeeded",
            "phases": [
                {"name": "draft", "status": "completed", "reportedSideEffects": "succeeded"},
                {"name": "review", "status": "failed"},
            ],
            "taskOutcome": OUTCOME,
            "finishedAt": ENDED.isoformat(),
            **extra,
        }
    )


def phase_status(**extra: Any) -> PhaseResourceStatus:
    return PhaseResourceStatus.model_validate(
        {
            "status": "completed",
            "report": {"state": "success", "success": True, "sideEffects": "none"},
            "taskOutcome": {**OUTCOME, "status": "success", "source": "agent"},
            "finishedAt": ENDED.isoformat(),
            **extra,
        }
    )


def body(event: message.Message) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(event.body)
    return parsed


def test_r50_the_finished_event_is_a_cloudevent_the_sdk_reads_back() -> None:
    event = message.execution_finished(EXECUTION, execution_status(), include_outcome=False)
    assert event.content_type == "application/cloudevents+json"
    read = cloudevents_http.from_structured(
        cloudevents_http.HTTPMessage(headers={"content-type": event.content_type}, body=event.body),
        JSONFormat(),
    )
    assert read.get_specversion() == "1.0"
    assert read.get_type() == "io.agentjobs.execution.finished"
    assert (
        read.get_source()
        == "/apis/agentjobs.io/v1alpha1/namespaces/team-a/executions/release-notes"
    )
    assert read.get_id() == event.id == "0b5c-uid-execution-finished"
    assert read.get_time() == ENDED
    assert read.get_subject() == "team-a/release-notes"
    assert read.get_datacontenttype() == "application/json"


def test_r50_data_holds_r23_to_r26_and_the_phases_but_no_outcome_unless_asked() -> None:
    data = body(message.execution_finished(EXECUTION, execution_status(), include_outcome=False))[
        "data"
    ]
    assert data == {
        "execution": "release-notes",
        "namespace": "team-a",
        "status": "failed",
        "failureClassification": "platform",
        "reportedFailureReason": "platform",
        "deliverableProduced": True,
        "reportedSideEffects": "succeeded",
        "phases": [
            {
                "name": "draft",
                "status": "completed",
                "deliverableRecovered": False,
                "reportedSideEffects": "succeeded",
            },
            {"name": "review", "status": "failed", "deliverableRecovered": False},
        ],
    }


def test_r66_the_ends_carry_each_repositorys_branch_and_push_but_not_its_bundle() -> None:
    entry = {
        "name": "service", "url": "https://g/s.git", "branch": "agentjobs/release-notes",
        "baseCommit": "a" * 40, "headCommit": "b" * 40, "commits": 2, "pushed": False,
        "pushError": "GH006: Protected branch update failed",
        "bundle": "s3://b/k/work.bundle", "bundleSha256": "c" * 64, "bundleBase": "a" * 40,
    }  # fmt: skip
    shown = {k: v for k, v in entry.items() if not k.startswith("bundle")} | {
        "workflowChangesQuarantined": False,
        "uncommittedChanges": False,
    }
    ended = execution_status(repositories=[entry])
    data = body(message.execution_finished(EXECUTION, ended, include_outcome=False))["data"]
    assert data["repositories"] == [shown]
    event = message.phase_finished(
        EXECUTION, phase="draft", resource_name="release-notes-0-draft",
        status=phase_status(repositories=[entry]), include_outcome=False,
    )  # fmt: skip
    assert body(event)["data"]["repositories"] == [shown]
    plain = body(message.execution_finished(EXECUTION, execution_status(), include_outcome=False))
    assert "repositories" not in plain["data"]


def test_r50_include_outcome_adds_the_task_outcome() -> None:
    data = body(message.execution_finished(EXECUTION, execution_status(), include_outcome=True))[
        "data"
    ]
    assert data["outcome"]["status"] == "blocked"
    assert data["outcome"]["needsUserAction"] is True
    assert data["outcome"]["blockers"][0]["type"] == "auth"


def test_r50_a_phase_event_carries_that_phases_verdict_and_its_own_outcome() -> None:
    event = message.phase_finished(
        EXECUTION,
        phase="draft",
        resource_name="release-notes-0-draft",
        status=phase_status(),
        include_outcome=True,
    )
    parsed = body(event)
    assert parsed["type"] == "io.agentjobs.phase.finished"
    assert parsed["source"] == (
        "/apis/agentjobs.io/v1alpha1/namespaces/team-a/phases/release-notes-0-draft"
    )
    assert parsed["subject"] == "team-a/release-notes/draft"
    assert event.id == "0b5c-uid-phase-draft-finished"
    assert parsed["data"] == {
        "execution": "release-notes",
        "namespace": "team-a",
        "phase": "draft",
        "status": "completed",
        "failureClassification": None,
        "reportedFailureReason": None,
        "reportedSideEffects": "none",
        "deliverableRecovered": False,
        "outcome": parsed["data"]["outcome"],
    }
    assert parsed["data"]["outcome"]["source"] == "agent"


def test_r50_the_same_end_gives_the_same_bytes_and_another_end_another_id() -> None:
    first = message.execution_finished(EXECUTION, execution_status(), include_outcome=True)
    again = message.execution_finished(EXECUTION, execution_status(), include_outcome=True)
    assert first == again
    other = message.ExecutionRef(namespace="team-a", name="release-notes", uid="another-uid")
    assert message.execution_finished(other, execution_status(), include_outcome=True).id != (
        first.id
    )
    phase_ids = {message.phase_event_id(EXECUTION, name) for name in ("draft", "review")}
    assert len(phase_ids | {first.id}) == 3


def test_a_hostile_status_is_cut_to_a_small_body() -> None:
    huge = "x" * 200_000
    hostile = {
        **OUTCOME,
        "summary": huge,
        "terminalReason": huge,
        "blockers": [{"type": huge, "message": huge, "recoverable": False}] * 500,
    }
    phases = [{"name": huge + str(i), "status": "completed"} for i in range(500)]
    event = message.execution_finished(
        EXECUTION, execution_status(phases=phases, taskOutcome=hostile), include_outcome=True
    )
    assert len(event.body) < 128 * 1024
    data = body(event)["data"]
    assert len(data["outcome"]["summary"]) == message.STRING_LIMIT
    assert data["outcome"]["summary"].endswith("...[cut]")
    assert len(data["outcome"]["blockers"]) == message.LIST_LIMIT
    assert len(data["phases"]) == message.LIST_LIMIT


def test_an_event_without_its_end_time_is_refused_rather_than_stamped_now() -> None:
    with pytest.raises(ValueError, match="finishedAt"):
        message.execution_finished(
            EXECUTION, execution_status(finishedAt=None), include_outcome=False
        )
    with pytest.raises(ValueError, match="finishedAt"):
        message.phase_finished(
            EXECUTION,
            phase="draft",
            resource_name="r",
            status=phase_status(finishedAt=None),
            include_outcome=False,
        )
