"""The outcome loop's pods and hand-offs (R38, R42, R44) and its status steps (R41, R43).

Cases: the grader's pod is a phase pod named -g<n>, with the rubric file, the
description as its prompt and the graded attempt's manifest as its only input,
and nothing of the agent's container (prompt, env, service account); a revised
attempt's fetcher brings the previous files and the evaluation file; the fetcher
puts them under previous/ and feedback/; each loop step's status; an interrupt
reaches the running phase, and between phases ends the execution interrupted.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentjobs.contract.execution import execution_plan
from agentjobs.contract.grading import grader, phase_end, revision
from agentjobs.contract.grading.evaluation import Evaluated
from agentjobs.contract.phase import loop_status
from agentjobs.kube import naming, pod_security, pods, prompts
from agentjobs.models.contract import (
    EvaluationResult,
    PhaseStatus,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
    Usage,
)
from agentjobs.models.outcomes import Evaluation, PhaseOutcome
from agentjobs.models.repositories import PhaseRepository, RepositoryStatus
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import HandoffRef
from agentjobs.sidecars import fetcher
from tests.unit.test_execution_plan import SPEC, child, plan
from tests.unit.test_fetcher import MemoryStore, handed_on, tree
from tests.unit.test_pods import OWNER, SIDECARS

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
GRADED = HandoffRef(
    manifest="s3://b/ns/demo/0-plan/attempt-1/artifacts.json", sha256="cd" * 32, count=1
)


def phase(**outcome: Any) -> PhaseSpec:
    return PhaseSpec.model_validate(
        {
            "executionName": "demo",
            "index": 0,
            "name": "plan",
            "image": "agent:1",
            "prompt": "The agent's secret prompt.",
            "env": [{"name": "AGENT_TOKEN", "value": "agent-only"}],
            "serviceAccountName": "agent-sa",
            "securityContext": {"runAsUser": 1234},
            "outcome": {
                "description": "A plan with milestones",
                "rubric": "- has `milestones`",
                "grader": {"command": ["grade"], "env": [{"name": "MODEL", "value": "m"}]},
                **outcome,
            },
        }
    )


def grader_pod(spec: PhaseSpec) -> dict[str, Any]:
    graded = grader.grader_spec(spec, GRADED)
    sidecars = dataclasses.replace(SIDECARS, inputs=graded.inputs)
    return pods.phase_pod(
        graded,
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        attempt=1,
        sidecars=sidecars,
        security=pod_security.PodSecurity(),
        pod_name=naming.grader_pod("demo-0-plan", 1),
        config_map_name=naming.pod_config_map(naming.grader_pod("demo-0-plan", 1)),
        container=pods.GRADER_CONTAINER,
    )


def test_r38_the_grader_pod_sees_the_rubric_the_description_and_the_graded_artifacts() -> None:
    manifest = grader_pod(phase())
    assert manifest["metadata"]["name"] == "demo-0-plan-g1"
    [container] = [c for c in manifest["spec"]["containers"] if c["name"] == "grader"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["AGENTJOBS_RUBRIC_FILE"] == "/etc/agentjobs/prompt/rubric.md"
    assert env["AGENTJOBS_PROMPT_FILE"] == "/etc/agentjobs/prompt/prompt.md"
    assert env["MODEL"] == "m" and "AGENT_TOKEN" not in env
    assert (container["image"], container["command"]) == ("agent:1", ["grade"])
    assert "serviceAccountName" not in manifest["spec"]
    assert manifest["spec"]["automountServiceAccountToken"] is False
    assert container["securityContext"]["runAsUser"] == 1234  # the same hardening
    [volume] = [v for v in manifest["spec"]["volumes"] if v["name"] == pods.PROMPT_VOLUME]
    assert volume["configMap"]["name"] == "demo-0-plan-g1-prompt"
    fetch = next(c for c in manifest["spec"]["initContainers"] if c["name"] == "fetch-inputs")
    assert fetch["args"][:5] == [
        "fetch-inputs",
        "--inputs-manifest",
        GRADED.manifest,
        "--inputs-sha256",
        GRADED.sha256,
    ]
    assert "--previous-manifest" not in fetch["args"]


def test_r38_the_graders_files_hold_the_description_and_rubric_never_the_agents_prompt() -> None:
    spec = phase()
    assert spec.outcome is not None
    files = grader.grader_files(spec.outcome, "- has `milestones`")
    assert files["rubric.md"] == "- has `milestones`"
    assert files["prompt.md"].startswith("A plan with milestones\n")
    assert "GRADE_RESULT_END" in files["prompt.md"]
    assert "secret prompt" not in json.dumps(files)
    no_description = phase(description=None).outcome
    assert no_description is not None
    assert grader.grader_prompt(no_description).startswith(grader.NO_DESCRIPTION)


def test_the_grader_image_is_its_own_when_it_names_one() -> None:
    spec = phase(grader={"image": "grader:2", "command": ["g"]})
    assert grader.grader_spec(spec, GRADED).image == "grader:2"


def test_r42_a_revised_attempt_fetches_its_previous_files_and_the_evaluation() -> None:
    revised = dataclasses.replace(SIDECARS, previous=GRADED, feedback_key="evaluation-0.json")
    manifest = pods.phase_pod(
        phase(),
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        attempt=2,
        sidecars=revised,
        security=pod_security.PodSecurity(),
        config_map_name=naming.pod_config_map("demo-0-plan-a2"),
    )
    assert manifest["metadata"]["name"] == "demo-0-plan-a2"
    fetch = next(c for c in manifest["spec"]["initContainers"] if c["name"] == "fetch-inputs")
    args = fetch["args"]
    assert args[args.index("--previous-manifest") + 1] == GRADED.manifest
    assert args[args.index("--previous-sha256") + 1] == GRADED.sha256
    assert args[args.index("--feedback") + 1] == "/etc/agentjobs/prompt/evaluation-0.json"
    assert args[args.index("--inputs-manifest") + 1] == SIDECARS.inputs.manifest  # type: ignore[union-attr]
    config_map = prompts.prompt_config_map(
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        prompt="Plan.\n\n## Revision: iteration 2 of at most 3\n",
        name="demo-0-plan-a2-prompt",
        files={"evaluation-0.json": "{}"},
    )
    assert config_map["metadata"]["name"] == "demo-0-plan-a2-prompt"
    prompt = config_map["data"]["prompt.md"]
    assert prompt.index("## Revision") < prompt.index("TASK_RESULT_END")
    assert config_map["data"]["evaluation-0.json"] == "{}"


def test_r42_the_fetcher_puts_previous_files_and_the_evaluation_in_their_directories(
    tmp_path: Path,
) -> None:
    store = MemoryStore()
    previous = handed_on(store, {"report.md": b"draft", "notes/a.txt": b"a"})
    evaluation_file = tmp_path / "prompt" / "evaluation-0.json"
    evaluation_file.parent.mkdir()
    evaluation_file.write_text('{"result": "needs_revision"}')
    workspace = tmp_path / "workspace"
    fetcher.fetch(
        store,  # type: ignore[arg-type]
        None,
        input_dir=workspace / "input",
        output_dir=workspace / "output",
        revision=fetcher.Revision(
            previous, workspace / "previous", evaluation_file, workspace / "feedback"
        ),
    )
    assert tree(workspace / "previous") == {"report.md": b"draft", "notes/a.txt": b"a"}
    assert tree(workspace / "feedback") == {"evaluation-0.json": b'{"result": "needs_revision"}'}
    assert tree(workspace / "input") == {}


def concluded() -> PhaseResourceStatus:
    return PhaseResourceStatus.model_validate(
        {
            "status": "completed",
            "podName": "demo-0-plan-a1",
            "attempt": 1,
            "usage": {"inputTokens": 10},
            "artifacts": [{"path": "plan.md", "title": "plan.md", "size": 3}],
            "run": {
                "streamIntact": True,
                "report": {"state": "success"},
                "transcriptBytes": 9,
                "transcriptSha256": "ab" * 32,
            },
            "log": {"bytesRead": 9, "sha256": "ab" * 32},
            "finishedAt": NOW.isoformat(),
        }
    )


def test_r43_grading_keeps_the_attempt_and_runs_on() -> None:
    recorded = PhaseOutcome(evaluations=[Evaluation(iteration=0, grader_pod="g1")])
    status = loop_status.grading(
        concluded(), recorded=recorded, message="grading", generation=1, now=NOW
    )
    assert status.status is PhaseStatus.RUNNING and status.finished_at is None
    assert status.outcome == recorded and status.artifacts[0].path == "plan.md"
    assert status.run is not None  # the attempt's record stays until the next attempt


def test_r42_revising_clears_the_attempts_record_and_adds_the_graders_usage() -> None:
    status = loop_status.revising(
        concluded(),
        recorded=PhaseOutcome(result=EvaluationResult.NEEDS_REVISION),
        spent=Usage(input_tokens=5),
        next_attempt=2,
        message="revising",
        generation=1,
        now=NOW,
    )
    assert (status.attempt, status.pod_name, status.run, status.log) == (2, None, None, None)
    assert status.usage is not None and status.usage.input_tokens == 15


def test_r41_an_ended_loop_keeps_the_last_files_as_from_a_failed_phase() -> None:
    end = phase_end.phase_end(
        Evaluated(1, EvaluationResult.MAX_ITERATIONS_REACHED),
        criteria=[],
        explanation="not there",
        agent_outcome=TaskOutcome(
            status=TaskOutcomeStatus.SUCCESS,
            source=TaskOutcomeSource.AGENT,
            summary="ok",
            terminal_reason="finish_action",
            reported_at=NOW,
        ),
        max_iterations=2,
        now=NOW,
    )
    status = loop_status.ended(
        concluded(), end, recorded=PhaseOutcome(), spent=None, generation=1, now=NOW
    )
    assert status.status is PhaseStatus.FAILED
    assert status.failure_classification == "outcome_not_met"
    [artifact] = status.artifacts
    assert (artifact.kept_as, artifact.title) == (
        "failed_phase",
        "plan.md (kept from a failed phase)",
    )
    assert status.run is not None and status.run.last_message is None


def test_r44_an_interrupt_reaches_the_running_phase_once() -> None:
    interrupted = SPEC.model_copy(update={"interrupt": True})
    result = plan([child(0, {"status": "running"})], interrupted)
    assert (result.interrupt, result.cancel, result.status.status) == (
        ["demo-0-plan"],
        [],
        "running",
    )
    assert plan([child(0, {"status": "running"}, interrupt=True)], interrupted).interrupt == []


def test_r44_an_interrupt_between_phases_ends_the_execution_interrupted() -> None:
    interrupted = SPEC.model_copy(update={"interrupt": True})
    result = plan([child(0, {"status": "completed"})], interrupted)
    assert (result.create_index, result.status.status) == (None, "interrupted")
    assert result.status.task_outcome is not None
    assert result.status.task_outcome.summary == (execution_plan.INTERRUPTED_BETWEEN_PHASES.message)


def test_r42_a_restart_rebuilds_the_revision_from_the_record() -> None:
    recorded = PhaseOutcome.model_validate(
        {
            "result": "needs_revision",
            "evaluations": [
                {
                    "iteration": 0,
                    "result": "needs_revision",
                    "explanation": "Not yet.",
                    "criteria": [{"name": "fixed", "met": False, "feedback": "write FIXED"}],
                }
            ],
        }
    )
    rebuilt = revision.recorded_revision(recorded, GRADED, max_iterations=3)
    assert rebuilt is not None and rebuilt.previous == GRADED
    assert rebuilt.feedback_key == "evaluation-0.json"
    assert json.loads(rebuilt.feedback)["criteria"][0]["feedback"] == "write FIXED"
    assert "- fixed: write FIXED" in rebuilt.section
    assert revision.recorded_revision(recorded, None, max_iterations=3) is None
    satisfied = recorded.model_copy(
        update={
            "evaluations": [
                recorded.evaluations[0].model_copy(update={"result": EvaluationResult.SATISFIED})
            ]
        }
    )
    assert revision.recorded_revision(satisfied, GRADED, max_iterations=3) is None


def test_r38_a_grader_checks_each_repository_out_where_the_graded_attempt_left_it() -> None:
    checkout = PhaseRepository(
        name="service", url="https://g/s.git", branch="agentjobs/demo", push=True,
        credentials_secret="git", agent_credentials=True,
    )  # fmt: skip
    unnamed = checkout.model_copy(update={"name": "docs"})
    spec = phase().model_copy(update={"repositories": [checkout, unnamed]})
    graded = RepositoryStatus(
        name="service", url="https://g/s.git", base_commit="a" * 40, head_commit="b" * 40,
        bundle="s3://b/k/work.bundle", bundle_sha256="c" * 64, bundle_base="0" * 40,
    )  # fmt: skip
    [seen] = grader.grader_spec(spec, GRADED, [graded]).repositories or []
    assert (seen.name, seen.push, seen.agent_credentials, seen.diff_from) == (
        "service", False, False, "a" * 40
    )  # fmt: skip
    assert seen.credentials_secret == "git"  # the fetcher still clones with it
    assert seen.handed is not None
    assert (seen.handed.commit, seen.handed.since, seen.handed.bundle) == (
        "b" * 40, "0" * 40, "s3://b/k/work.bundle"
    )  # fmt: skip
    assert grader.grader_spec(spec, GRADED).repositories is None
