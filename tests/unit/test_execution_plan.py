"""What an Execution does next, from its Phases (R23, R35), and each Phase's spec.

Cases: the first Phase is created, the next only after the previous one
completed; nothing more after a failure; cancelling cancels the running
Phase, or ends an execution between phases at once; the next phase's
inputs are the previous phase's stored artifacts; defaults apply to every
phase with the phase's own settings winning; conditions keep their
transition time while their status holds; a written status is settled only
when a reconcile of it would do nothing; a Phase the API server refuses fails
the execution once, with the refusal's words.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agentjobs.contract.execution import execution_plan
from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.phase import phase_status
from agentjobs.kube import conditions
from agentjobs.models.contract import FailureKind, SystemFailure
from agentjobs.models.repositories import Repository, RepositoryStatus
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec, PhaseSpec

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
SPEC = ExecutionSpec.model_validate(
    {
        "defaults": {
            "image": "agent:1",
            "env": [{"name": "A", "value": "default"}, {"name": "B", "value": "default"}],
            "envFrom": [{"secretRef": {"name": "shared"}}],
            "timeoutSeconds": 60,
        },
        "phases": [
            {
                "name": "plan",
                "prompt": "p",
                "env": [{"name": "B", "value": "own"}],
                "envFrom": [{"configMapRef": {"name": "own"}}],
            },
            {"name": "build", "prompt": "b", "image": "builder:2"},
        ],
    }
)


def child(index: int, status: dict[str, Any], **spec: Any) -> ChildPhase:
    phase = phase_status.phase_spec(SPEC, execution_name="demo", index=index)
    return ChildPhase(
        resource_name=f"demo-{index}-{phase.name}",
        spec=phase.model_copy(update=spec),
        status=PhaseResourceStatus.model_validate(status),
    )


def plan(children: list[ChildPhase], spec: ExecutionSpec = SPEC) -> execution_plan.ExecutionPlan:
    return execution_plan.plan_execution(
        spec, children, previous=ExecutionResourceStatus(), generation=1, now=NOW
    )


COMPLETED = {
    "status": "completed",
    "artifacts": [
        {
            "path": "plan.md",
            "title": "plan.md",
            "size": 4,
            "sha256": "ab" * 32,
            "url": "s3://b/ns/demo/0-plan/attempt-1/output/plan.md",
        },
        {"path": "unstored.md", "title": "unstored.md", "size": 1},
    ],
    "artifactCount": 2,
    "handoff": {
        "manifest": "s3://b/ns/demo/0-plan/attempt-1/artifacts.json",
        "sha256": "cd" * 32,
        "count": 1,
    },
}


def test_r23_the_first_phase_is_created_first() -> None:
    result = plan([])
    assert (result.create_index, result.status.status, result.status.current_phase) == (
        0,
        "running",
        "plan",
    )


def test_r23_the_next_phase_waits_for_the_previous_one() -> None:
    assert plan([child(0, {"status": "running"})]).create_index is None
    assert plan([child(0, COMPLETED)]).create_index == 1


def test_r35_the_next_phase_receives_the_previous_phases_stored_artifacts() -> None:
    handed = plan([child(0, COMPLETED)]).inputs
    assert handed is not None
    assert handed.manifest == "s3://b/ns/demo/0-plan/attempt-1/artifacts.json"
    assert (handed.sha256, handed.count) == ("cd" * 32, 1)


def test_r35_a_phase_that_stored_nothing_hands_nothing_on() -> None:
    nothing = {**COMPLETED, "handoff": {**COMPLETED["handoff"], "count": 0}}  # type: ignore[dict-item]
    assert plan([child(0, nothing)]).inputs is None
    assert plan([child(0, {"status": "completed"})]).inputs is None


def test_r25_the_execution_counts_every_artifact_not_only_those_listed() -> None:
    many = {**COMPLETED, "artifactCount": 250}
    assert plan([child(0, many)]).status.artifact_count == 250


def test_r23_nothing_is_created_after_a_failure() -> None:
    result = plan([child(0, {"status": "failed", "failureClassification": "platform"})])
    assert (result.create_index, result.status.status) == (None, "failed")
    assert result.status.finished_at == NOW


def test_all_phases_completed_completes_the_execution() -> None:
    result = plan([child(0, COMPLETED), child(1, {"status": "completed"})])
    assert (result.create_index, result.status.status) == (None, "completed")
    assert result.status.deliverable_produced is True
    assert result.status.artifact_count == 2


def test_cancel_cancels_the_running_phase() -> None:
    cancelled = SPEC.model_copy(update={"cancel": True})
    result = plan([child(0, {"status": "running"})], cancelled)
    assert result.cancel == ["demo-0-plan"]
    assert result.status.status == "running"


def test_cancel_between_phases_ends_the_execution_cancelled_at_once() -> None:
    cancelled = SPEC.model_copy(update={"cancel": True})
    result = plan([child(0, COMPLETED)], cancelled)
    assert (result.create_index, result.status.status) == (None, "cancelled")
    assert result.status.task_outcome is not None
    assert result.status.task_outcome.terminal_reason == "cancelled"


def test_a_phase_already_told_to_cancel_is_not_told_again() -> None:
    cancelled = SPEC.model_copy(update={"cancel": True})
    assert plan([child(0, {"status": "running"}, cancel=True)], cancelled).cancel == []


def test_defaults_apply_to_every_phase_and_the_phases_own_settings_win() -> None:
    plan_phase = phase_status.phase_spec(SPEC, execution_name="demo", index=0)
    build_phase = phase_status.phase_spec(SPEC, execution_name="demo", index=1)
    assert (plan_phase.image, build_phase.image) == ("agent:1", "builder:2")
    assert plan_phase.timeout_seconds == build_phase.timeout_seconds == 60
    assert [(e.name, e.value) for e in plan_phase.env or []] == [("A", "default"), ("B", "own")]
    sources = [e.secret_ref or e.config_map_ref for e in plan_phase.env_from or []]
    assert [s.name for s in sources if s] == ["shared", "own"]
    assert (plan_phase.execution_name, plan_phase.index) == ("demo", 0)


def test_spec_round_trips_through_its_camel_case_json() -> None:
    phase = phase_status.phase_spec(SPEC, execution_name="demo", index=0)
    dumped = phase.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["executionName"] == "demo"
    assert PhaseSpec.model_validate(dumped) == phase


def test_conditions_keep_their_transition_time_while_their_status_holds() -> None:
    first = conditions.conditions_for("running", message="m", previous=[], generation=1, now=NOW)
    later = NOW + timedelta(minutes=5)
    again = conditions.conditions_for(
        "running", message="m2", previous=first, generation=1, now=later
    )
    assert all(c.last_transition_time == NOW for c in again)
    done = conditions.conditions_for(
        "completed", message="ok", previous=again, generation=1, now=later
    )
    by_type = {c.type: c for c in done}
    assert by_type["Complete"].status == "True"
    assert by_type["Complete"].last_transition_time == later
    assert by_type["Failed"].last_transition_time == NOW
    assert by_type["Finished"].reason == "Completed"
    assert conditions.changed_types(again, done) == ["Complete", "Finished"]


def _replan(
    children: list[ChildPhase], spec: ExecutionSpec, previous: ExecutionResourceStatus
) -> execution_plan.ExecutionPlan:
    later = NOW + timedelta(seconds=7)
    return execution_plan.plan_execution(spec, children, previous=previous, generation=1, now=later)


def test_a_reconcile_that_changes_nothing_gives_the_same_status() -> None:
    # A pre-cancelled execution was patched for ever: each plan had a new reportedAt.
    cancelled = SPEC.model_copy(update={"cancel": True})
    first = plan([child(0, COMPLETED)], cancelled).status
    assert _replan([child(0, COMPLETED)], cancelled, first).status == first
    running = plan([child(0, {"status": "running"})]).status
    assert _replan([child(0, {"status": "running"})], SPEC, running).status == running


def test_a_written_status_is_settled_only_when_a_reconcile_of_it_would_do_nothing() -> None:
    # Its write's event is then not reconciled (controllers/execution/executions.py).
    running = [child(0, {"status": "running"})]
    written = plan(running).status
    assert execution_plan.settled(SPEC, running, written, generation=1, now=NOW)
    ended = [child(0, COMPLETED)]  # the first phase ended: the next one is to be created
    assert not execution_plan.settled(SPEC, ended, written, generation=1, now=NOW)
    assert not execution_plan.settled(SPEC, running, written, generation=2, now=NOW)


def test_an_ended_execution_keeps_its_verdict_whatever_its_phases_do() -> None:
    failed = plan([child(0, {"status": "failed", "failureClassification": "platform"})]).status
    again = _replan([], SPEC, failed)
    assert (again.create_index, again.status) == (None, failed)


def test_a_phase_deleted_from_outside_interrupts_the_execution_and_is_not_recreated() -> None:
    running = plan([child(0, {"status": "running"})]).status
    result = _replan([], SPEC, running)
    assert result.create_index is None
    assert (result.status.status, result.status.current_phase) == ("interrupted", "plan")
    assert [(p.name, p.status) for p in result.status.phases] == [("plan", "interrupted")]
    assert result.status.task_outcome is not None
    assert "'plan' was deleted" in result.status.task_outcome.summary
    assert result.status.finished_at is not None


def test_deleting_an_earlier_completed_phase_interrupts_and_cancels_the_running_one() -> None:
    both = [child(0, COMPLETED), child(1, {"status": "running"})]
    running = plan(both).status
    result = _replan([child(1, {"status": "running"})], SPEC, running)
    assert (result.status.status, result.status.current_phase) == ("interrupted", "plan")
    assert result.cancel == ["demo-1-build"]
    assert [p.name for p in result.status.phases] == ["plan", "build"]


def test_a_refused_phase_fails_the_execution_once_with_the_refusals_words() -> None:
    planned = plan([child(0, COMPLETED)])
    assert planned.create_index == 1
    refusal = SystemFailure(
        kind=FailureKind.CONFIG, code="Invalid", message="the API server refused Phase 'x'"
    )
    failed = execution_plan.phase_refused(
        planned.status, refusal, previous=ExecutionResourceStatus(), generation=1, now=NOW
    )
    assert (failed.status, failed.failure_classification) == ("failed", "platform")
    assert (failed.current_phase, failed.finished_at) == ("build", NOW)
    assert failed.task_outcome is not None and failed.task_outcome.status == "blocked"
    assert "refused Phase 'x'" in failed.task_outcome.summary
    assert [(c.type, c.status, c.message) for c in failed.conditions if c.type == "Failed"] == [
        ("Failed", "True", "the API server refused Phase 'x'")
    ]
    again = _replan([child(0, COMPLETED)], SPEC, failed)
    assert (again.create_index, again.status) == (None, failed)


REPOSITORY_SPEC = SPEC.model_copy(
    update={
        "repositories": [
            Repository.model_validate({"name": "service", "url": "https://g/s.git", "push": {}})
        ]
    }
)


def test_r63_the_next_phase_starts_each_repository_where_the_last_one_left_it() -> None:
    recorded = {
        "name": "service", "url": "https://g/s.git", "branch": "agentjobs/demo",
        "baseCommit": "a" * 40, "headCommit": "b" * 40, "commits": 1, "pushed": True,
        "bundle": "s3://b/ns/demo/0-plan/attempt-1/work/service/work.bundle",
        "bundleSha256": "c" * 64, "bundleBase": "a" * 40,
    }  # fmt: skip
    first = plan([], REPOSITORY_SPEC)
    assert first.repositories_before == [[]]
    done = child(0, {**COMPLETED, "repositories": [recorded]})
    result = plan([done], REPOSITORY_SPEC)
    assert result.status.repositories == [RepositoryStatus.model_validate(recorded)]
    [checkout] = phase_status.phase_spec(
        REPOSITORY_SPEC, execution_name="demo", index=1,
        repositories_before=result.repositories_before,
    ).repositories or []  # fmt: skip
    assert checkout.handed is not None
    assert (checkout.branch, checkout.push, checkout.handed.commit, checkout.handed.since) == (
        "agentjobs/demo", True, "b" * 40, "a" * 40
    )  # fmt: skip
    assert checkout.handed.bundle == recorded["bundle"]


def test_r63_a_phase_spec_without_repositories_has_none() -> None:
    assert phase_status.phase_spec(SPEC, execution_name="demo", index=0).repositories is None
    assert plan([]).status.repositories is None
