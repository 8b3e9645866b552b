"""R48: resuming an ended Execution (contract/execution/resume.py) and the plan of a resumed
one (R27).

Cases: a parent that does not exist, has not ended or completed is refused with
a code and a message naming it; the phases before the parent's first
unfinished one must be the same with defaults applied (a default moved onto
the phase is the same; a changed prompt or image is not, and the message names
the field), while the first unfinished one may change; something must be left
to run; inherited phases name the Execution that ran them, through a chain of
resumes; the hand-off comes from the parent's own Phase or from what the
parent itself inherited; the spec and name the CLI creates. The plan: nothing
runs and the execution fails (platform, a config blocker) when the resume is
refused; inherited phases are listed first with ``inheritedFrom``, not
created, and left out of R23-R26; once that is recorded, the first own phase
is created with the parent's hand-off; later reconciles use the record
without the parent; an inherited phase is never taken for one deleted from
outside; the recorded inheritance is not settled (its event must be reconciled).
The CLI wants NAMESPACE/NAME.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.cli import main as agentjobs
from agentjobs.contract.execution import execution_plan, resume
from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.phase import phase_status
from agentjobs.models.contract import SystemFailure
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import (
    ExecutionResourceStatus,
    PhaseResourceStatus,
    PhaseSummary,
    ResumedFrom,
)
from agentjobs.models.resources import ExecutionSpec
from agentjobs.models.storage import HandoffRef

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
PHASES = [
    {"name": "draft", "prompt": "d"},
    {"name": "review", "prompt": "r"},
    {"name": "publish", "prompt": "p", "image": "publisher:1"},
]
SPEC = ExecutionSpec.model_validate({"defaults": {"image": "agent:1"}, "phases": PHASES})
RESUMED = ExecutionSpec.model_validate(
    {"defaults": {"image": "agent:1"}, "phases": PHASES, "resumeFrom": {"name": "notes"}}
)
PARENT_HANDOFF = HandoffRef(
    manifest="s3://b/namespaces/ns/executions/notes/0-draft/attempt-1/artifacts.json",
    sha256="ab" * 32,
    count=2,
)
FAILED_AT_REVIEW = ExecutionResourceStatus.model_validate(
    {
        "status": "failed",
        "phases": [
            {"name": "draft", "status": "completed", "reportedSideEffects": "succeeded"},
            {"name": "review", "status": "failed"},
        ],
    }
)


def parent(
    status: ExecutionResourceStatus = FAILED_AT_REVIEW,
    spec: ExecutionSpec = SPEC,
    name: str = "notes",
) -> resume.Parent:
    return resume.Parent(name=name, uid=f"uid-{name}", spec=spec, status=status)


def refused(found: resume.Inheritance | SystemFailure) -> SystemFailure:
    assert isinstance(found, SystemFailure)
    assert found.kind == "config"
    return found


def inherited(found: resume.Inheritance | SystemFailure) -> resume.Inheritance:
    assert isinstance(found, resume.Inheritance)
    return found


def with_phases(*changes: dict[str, Any], defaults: dict[str, Any] | None = None) -> ExecutionSpec:
    phases = [{**phase, **change} for phase, change in zip(PHASES, changes, strict=False)]
    return ExecutionSpec.model_validate(
        {"defaults": defaults or {"image": "agent:1"}, "phases": phases + PHASES[len(phases) :]}
    )


def test_a_parent_that_does_not_exist_is_refused() -> None:
    failure = refused(resume.inherit(SPEC, None, name="gone"))
    assert failure.code == "ResumeParentNotFound"
    assert "'gone'" in failure.message


@pytest.mark.parametrize(
    ("status", "code"),
    [
        ({}, "ResumeParentNotEnded"),
        ({"status": "running"}, "ResumeParentNotEnded"),
        ({"status": "completed"}, "ResumeParentCompleted"),
    ],
)
def test_only_a_parent_that_ended_unfinished_can_be_resumed(
    status: dict[str, Any], code: str
) -> None:
    found = resume.inherit(SPEC, parent(ExecutionResourceStatus.model_validate(status)), name="n")
    assert refused(found).code == code


@pytest.mark.parametrize("ended", ["failed", "cancelled", "interrupted"])
def test_a_failed_cancelled_or_interrupted_parent_hands_on_its_completed_phases(
    ended: str,
) -> None:
    status = FAILED_AT_REVIEW.model_copy(update={"status": ended})
    found = inherited(resume.inherit(SPEC, parent(status), name="notes"))
    assert [(p.name, p.status, p.inherited_from) for p in found.phases] == [
        ("draft", "completed", "notes")
    ]
    assert found.phases[0].reported_side_effects == "succeeded"
    assert found.handoff_phase == (0, "draft")


def test_phases_are_compared_with_the_defaults_applied() -> None:
    moved = with_phases({"image": "agent:1"}, defaults={"image": "other:1"})
    assert isinstance(resume.inherit(moved, parent(), name="notes"), resume.Inheritance)


@pytest.mark.parametrize(
    ("change", "field"),
    [({"prompt": "other"}, "prompt"), ({"image": "agent:2"}, "image"), ({"name": "plan"}, "name")],
)
def test_a_changed_inherited_phase_is_refused_naming_the_field(
    change: dict[str, Any], field: str
) -> None:
    failure = refused(resume.inherit(with_phases(change), parent(), name="notes"))
    assert failure.code == "ResumePhasesDiffer"
    assert f"({field} differ)" in failure.message
    assert "from 'review' on may change" in failure.message


def test_the_first_unfinished_phase_and_later_ones_may_change() -> None:
    fixed = with_phases({}, {"prompt": "a better review prompt"}, {"image": "publisher:2"})
    assert [p.name for p in inherited(resume.inherit(fixed, parent(), name="notes")).phases] == [
        "draft"
    ]


def test_where_artifacts_are_stored_is_not_part_of_a_phase() -> None:
    elsewhere = ExecutionSpec.model_validate(
        {"defaults": {"image": "agent:1"}, "phases": PHASES, "artifacts": {"prefix": "team-b"}}
    )
    assert isinstance(resume.inherit(elsewhere, parent(), name="notes"), resume.Inheritance)


def test_a_resume_with_nothing_left_to_run_is_refused() -> None:
    two_done = FAILED_AT_REVIEW.model_copy(
        update={
            "phases": [
                PhaseSummary(name="draft", status="completed"),
                PhaseSummary(name="review", status="completed"),
            ],
            "status": "cancelled",
        }
    )
    shorter = ExecutionSpec.model_validate({"defaults": {"image": "agent:1"}, "phases": PHASES[:2]})
    failure = refused(resume.inherit(shorter, parent(two_done), name="notes"))
    assert failure.code == "ResumeNothingLeft"


def test_a_parent_that_failed_in_its_first_phase_hands_on_nothing() -> None:
    first = ExecutionResourceStatus.model_validate(
        {"status": "failed", "phases": [{"name": "draft", "status": "failed"}]}
    )
    found = inherited(resume.inherit(SPEC, parent(first), name="notes"))
    assert (found.phases, found.handoff_phase) == ((), None)
    assert resume.resumption(found, None).record == ResumedFrom(name="notes", uid="uid-notes")


def test_a_resumed_parent_hands_on_what_it_inherited_itself() -> None:
    # notes-r1 inherited draft from notes, and failed at review again.
    middle = ExecutionResourceStatus.model_validate(
        {
            "status": "failed",
            "phases": [
                {"name": "draft", "status": "completed", "inheritedFrom": "notes"},
                {"name": "review", "status": "failed"},
            ],
            "resumedFrom": {"name": "notes", "uid": "uid-notes", "handoff": PARENT_HANDOFF},
        }
    )
    found = inherited(resume.inherit(SPEC, parent(middle, name="notes-r1"), name="notes-r1"))
    assert [p.inherited_from for p in found.phases] == ["notes"]
    assert found.handoff_phase is None  # notes-r1 has no Phase for draft
    made = resume.resumption(found, None)
    assert made.record == ResumedFrom(name="notes-r1", uid="uid-notes-r1", handoff=PARENT_HANDOFF)


def test_the_handoff_of_the_parents_own_phase_is_recorded_unless_it_is_empty() -> None:
    found = inherited(resume.inherit(SPEC, parent(), name="notes"))
    assert resume.resumption(found, PARENT_HANDOFF).record.handoff == PARENT_HANDOFF
    empty = PARENT_HANDOFF.model_copy(update={"count": 0})
    assert resume.resumption(found, empty).record.handoff is None


def test_the_parent_is_read_only_until_what_it_handed_on_is_recorded() -> None:
    assert resume.needs_parent(RESUMED, ExecutionResourceStatus())
    assert not resume.needs_parent(SPEC, ExecutionResourceStatus())
    recorded = ExecutionResourceStatus(
        status="running", resumed_from=ResumedFrom(name="notes", uid="u")
    )
    assert not resume.needs_parent(RESUMED, recorded)
    assert not resume.needs_parent(RESUMED, ExecutionResourceStatus(status="failed"))


def test_the_cli_copies_the_spec_resuming_and_neither_cancelled_nor_interrupted() -> None:
    body = {"phases": PHASES, "cancel": True, "interrupt": True, "notify": []}
    assert resume.resumed_spec(body, parent_name="notes") == {
        "phases": PHASES,
        "notify": [],
        "resumeFrom": {"name": "notes"},
    }
    assert resume.resumed_name("notes", 2) == "notes-r2"
    found = inherited(resume.inherit(SPEC, parent(), name="notes"))
    assert resume.describe(found, SPEC) == "inherits draft (from notes); runs review, publish"


# --- the plan of a resumed execution (contract/execution/execution_plan.py) ---


def own(index: int, status: dict[str, Any]) -> ChildPhase:
    spec = phase_status.phase_spec(RESUMED, execution_name="notes-r1", index=index)
    return ChildPhase(
        resource_name=f"notes-r1-{index}-{spec.name}",
        spec=spec,
        status=PhaseResourceStatus.model_validate(status),
    )


def plan(
    children: list[ChildPhase],
    resumption: resume.Resumption | SystemFailure | None,
    previous: ExecutionResourceStatus | None = None,
) -> execution_plan.ExecutionPlan:
    return execution_plan.plan_execution(
        RESUMED,
        children,
        previous=previous or ExecutionResourceStatus(),
        generation=1,
        now=NOW,
        resumption=resumption,
    )


FROM_NOTES = resume.resumption(
    inherited(resume.inherit(RESUMED, parent(), name="notes")), PARENT_HANDOFF
)


def test_a_refused_resume_fails_the_execution_before_anything_runs() -> None:
    result = plan([], resume.refusal("ResumeParentNotFound", "there is no Execution 'notes'"))
    assert result.create_index is None
    status = result.status
    assert (status.status, status.failure_classification) == ("failed", "platform")
    assert status.task_outcome is not None
    assert (status.task_outcome.status, status.task_outcome.terminal_reason) == (
        "blocked",
        "ResumeParentNotFound",
    )
    assert status.task_outcome.needs_user_action
    assert [b.type for b in status.task_outcome.blockers] == ["config"]
    failed = {c.type: c for c in status.conditions}["Failed"]
    assert (failed.status, failed.message) == ("True", "resumeFrom: there is no Execution 'notes'")
    assert (status.phases, status.finished_at) == ([], NOW)


def test_the_first_phase_it_runs_is_the_parents_first_unfinished_one_with_its_handoff() -> None:
    recording = plan([], FROM_NOTES)
    assert recording.create_index is None  # what it inherits is recorded first
    assert recording.status.current_phase == "review"
    assert [(p.name, p.status, p.inherited_from) for p in recording.status.phases] == [
        ("draft", "completed", "notes")
    ]
    assert recording.status.resumed_from == FROM_NOTES.record
    result = plan([], None, previous=recording.status)
    assert (result.create_index, result.inputs) == (1, PARENT_HANDOFF)
    assert result.status == recording.status


def test_the_recorded_inheritance_is_not_settled_its_first_phase_comes_next() -> None:
    recorded = plan([], FROM_NOTES).status
    assert not execution_plan.settled(RESUMED, [], recorded, generation=1, now=NOW)
    assert not execution_plan.settled(
        RESUMED, [], ExecutionResourceStatus(), generation=1, now=NOW
    )  # not recorded yet: the parent must be read


def test_later_phases_get_their_predecessors_handoff_and_the_record_replaces_the_parent() -> None:
    first = plan([], FROM_NOTES).status
    own_handoff = PARENT_HANDOFF.model_copy(update={"manifest": "s3://b/x/1-review/artifacts.json"})
    review = own(1, {"status": "completed", "handoff": own_handoff.model_dump(by_alias=True)})
    result = plan([review], None, previous=first)
    assert (result.create_index, result.inputs) == (2, own_handoff)
    assert [(p.name, p.inherited_from) for p in result.status.phases] == [
        ("draft", "notes"),
        ("review", None),
    ]
    assert result.status.resumed_from == FROM_NOTES.record


def test_r27_its_fields_cover_only_the_phases_it_ran() -> None:
    first = plan([], FROM_NOTES).status
    done = [
        own(1, {"status": "completed", "report": {"state": "success", "sideEffects": "none"}}),
        own(2, {"status": "completed", "artifacts": [], "usage": {"inputTokens": 5}}),
    ]
    status = plan(done, None, previous=first).status
    assert status.status == "completed"
    # draft reported "succeeded" on the parent; only the phases run here count.
    assert status.reported_side_effects == "none"
    assert status.deliverable_produced is False
    assert status.artifact_count == 0
    assert status.usage is not None and status.usage.input_tokens == 5
    assert [p.name for p in status.phases] == ["draft", "review", "publish"]


def test_an_inherited_phase_is_never_taken_for_one_deleted_from_outside() -> None:
    first = plan([], FROM_NOTES).status
    result = plan([own(1, {"status": "running"})], None, previous=first)
    assert result.status.status == "running"
    assert result.cancel == []


def test_the_cli_wants_namespace_and_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert agentjobs(["resume", "notes"]) == 2
    assert capsys.readouterr().err == "agentjobs: error: give the execution as NAMESPACE/NAME\n"


def test_r63_a_resumed_execution_starts_each_repository_where_the_parents_phases_left_it() -> None:
    def entry(name: str, head: str) -> RepositoryStatus:
        return RepositoryStatus(name=name, url=f"https://g/{name}.git", head_commit=head)

    found = inherited(resume.inherit(SPEC, parent(), name="notes"))
    made = resume.resumption(found, PARENT_HANDOFF, [entry("service", "b" * 40)])
    assert made.record.repositories == [entry("service", "b" * 40)]
    # Over what the parent inherited itself, the parent's own last phase wins.
    middle = FAILED_AT_REVIEW.model_copy(
        update={
            "resumed_from": ResumedFrom(
                name="notes", uid="u",
                repositories=[entry("service", "a" * 40), entry("docs", "d" * 40)],
            )
        }
    )  # fmt: skip
    again = inherited(resume.inherit(SPEC, parent(middle, name="notes-r1"), name="notes-r1"))
    made = resume.resumption(again, PARENT_HANDOFF, [entry("service", "b" * 40)])
    assert made.record.repositories == [entry("docs", "d" * 40), entry("service", "b" * 40)]
    nothing = inherited(resume.inherit(SPEC, parent(), name="notes"))
    assert resume.resumption(nothing, PARENT_HANDOFF).record.repositories is None
