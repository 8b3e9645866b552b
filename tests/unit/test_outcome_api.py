"""The outcome's API (R37, R43, R44): the models, the generated CRDs and the Execution's summary.

Cases: an outcome on a phase or in defaults, maxIterations 1-20 defaulting
to 3, a grader required; the phase's own outcome replaces the defaults' and
the grader runs the phase's image unless it names its own; the CRDs carry
the CEL rules (rubric xor rubricFrom, the bound, a grader without an image
needs a command, an interrupt cannot be taken back) with their messages, the
new enum values (outcome_not_met, the evaluation results) and the Outcome
printer columns; a Phase's `status.outcome` round-trips in camelCase and
its result is listed on the Execution.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from agentjobs.contract.execution import execution_plan
from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.phase import phase_status
from agentjobs.models.contract import EvaluationResult, PhaseStatus
from agentjobs.models.outcomes import OutcomeSpec, PhaseOutcome
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec

CRDS = Path(__file__).parents[2] / "crds"
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
GRADER = {"command": ["grade"]}


def execution(phases: list[dict[str, Any]], **defaults: Any) -> ExecutionSpec:
    return ExecutionSpec.model_validate(
        {"defaults": {"image": "agent:1", **defaults}, "phases": phases}
    )


def test_r37_an_outcome_defaults_to_three_iterations() -> None:
    outcome = OutcomeSpec.model_validate({"rubric": "## Coverage\n- all", "grader": GRADER})
    assert outcome.max_iterations == 3


@pytest.mark.parametrize("count", [0, 21, -1])
def test_r37_max_iterations_outside_1_to_20_is_refused(count: int) -> None:
    with pytest.raises(pydantic.ValidationError):
        OutcomeSpec.model_validate({"rubric": "r", "maxIterations": count, "grader": GRADER})


def test_r37_an_outcome_needs_a_grader() -> None:
    with pytest.raises(pydantic.ValidationError, match="grader"):
        OutcomeSpec.model_validate({"rubric": "r"})


def test_r37_the_defaults_outcome_applies_to_every_phase_and_a_phases_own_replaces_it() -> None:
    own = {"rubricFrom": {"configMapKeyRef": {"name": "rubrics", "key": "b"}}, "grader": GRADER}
    spec = execution(
        [{"name": "a", "prompt": "p"}, {"name": "b", "prompt": "p", "outcome": own}],
        outcome={"rubric": "shared", "maxIterations": 5, "grader": GRADER},
    )
    first = phase_status.phase_spec(spec, execution_name="x", index=0).outcome
    second = phase_status.phase_spec(spec, execution_name="x", index=1).outcome
    assert first is not None and second is not None
    assert (first.rubric, first.max_iterations) == ("shared", 5)
    assert (second.rubric, second.max_iterations) == (None, 3)
    assert second.rubric_from is not None
    assert second.rubric_from.config_map_key_ref.key == "b"


def test_r37_the_grader_runs_the_phases_image_unless_it_names_its_own() -> None:
    spec = execution(
        [
            {"name": "a", "prompt": "p", "outcome": {"rubric": "r", "grader": GRADER}},
            {
                "name": "b",
                "prompt": "p",
                "image": "agent:2",
                "outcome": {"rubric": "r", "grader": {"image": "grader:1"}},
            },
        ]
    )
    first = phase_status.phase_spec(spec, execution_name="x", index=0).outcome
    second = phase_status.phase_spec(spec, execution_name="x", index=1).outcome
    assert first is not None and second is not None
    assert first.grader.image == "agent:1"
    assert second.grader.image == "grader:1"
    assert spec.phases[0].outcome is not None
    assert spec.phases[0].outcome.grader.image is None  # the Execution's spec is left as written


def test_r44_interrupt_is_false_until_set() -> None:
    spec = execution([{"name": "a", "prompt": "p"}])
    assert spec.interrupt is False
    set_spec = ExecutionSpec.model_validate(
        {**spec.model_dump(by_alias=True, exclude_none=True), "interrupt": True}
    )
    assert set_spec.interrupt is True


def test_r43_a_phase_outcome_round_trips_in_camel_case() -> None:
    status = PhaseResourceStatus.model_validate(
        {
            "outcome": {
                "result": "needs_revision",
                "evaluations": [
                    {
                        "iteration": 0,
                        "result": "needs_revision",
                        "explanation": "one gap",
                        "criteria": [{"name": "links", "met": False, "feedback": "fix"}],
                        "usage": {"inputTokens": 5},
                        "graderPod": "x-0-a-g0",
                        "startedAt": "2026-12-01T12:00:00Z",
                        "finishedAt": "2026-12-01T12:01:00Z",
                    },
                    {"iteration": 1, "graderPod": "x-0-a-g1"},
                ],
            }
        }
    )
    assert status.outcome is not None
    assert status.outcome.evaluations[1].result is None  # its grader is still running
    dumped = status.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["outcome"]["evaluations"][0]["graderPod"] == "x-0-a-g0"
    assert PhaseResourceStatus.model_validate(dumped) == status


def test_r43_the_execution_lists_each_phases_outcome_and_shows_the_latest() -> None:
    spec = execution([{"name": "a", "prompt": "p"}, {"name": "b", "prompt": "p"}])
    children = [
        ChildPhase(
            resource_name=f"x-{index}",
            spec=phase_status.phase_spec(spec, execution_name="x", index=index),
            status=PhaseResourceStatus(
                status=status, outcome=PhaseOutcome(result=result) if result else None
            ),
        )
        for index, (status, result) in enumerate(
            [(PhaseStatus.COMPLETED, EvaluationResult.SATISFIED), (PhaseStatus.RUNNING, None)]
        )
    ]
    planned = execution_plan.plan_execution(
        spec, children, previous=ExecutionResourceStatus(), generation=1, now=NOW
    ).status
    assert [p.outcome for p in planned.phases] == [EvaluationResult.SATISFIED, None]
    assert planned.outcome is EvaluationResult.SATISFIED


# -- the generated CRDs --------------------------------------------------------


def _crd(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CRDS / name).read_text())
    return loaded


def _version(name: str) -> dict[str, Any]:
    version: dict[str, Any] = _crd(name)["spec"]["versions"][0]
    return version


def _spec_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = _version(name)["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schema


def _outcome_schema() -> dict[str, Any]:
    phase: dict[str, Any] = _spec_schema("executions.yaml")["properties"]["phases"]["items"]
    outcome: dict[str, Any] = phase["properties"]["outcome"]
    return outcome


def _messages(node: dict[str, Any]) -> dict[str, str]:
    return {rule["rule"]: rule["message"] for rule in node.get("x-kubernetes-validations", [])}


def test_r37_the_crd_states_rubric_xor_rubric_from_with_a_message() -> None:
    outcome = _outcome_schema()
    message = _messages(outcome)["has(self.rubric) != has(self.rubricFrom)"]
    assert "outcome.rubricFrom.configMapKeyRef" in message
    assert outcome["required"] == ["grader"]
    defaults = _spec_schema("executions.yaml")["properties"]["defaults"]["properties"]
    assert defaults["outcome"] == outcome


def test_r37_the_crd_bounds_max_iterations_with_a_message() -> None:
    bound = _outcome_schema()["properties"]["maxIterations"]
    assert bound["type"] == "integer"
    assert "maxIterations must be from 1 to 20" in _messages(bound)["self >= 1 && self <= 20"]


def test_r37_a_grader_without_an_image_needs_a_command() -> None:
    grader = _outcome_schema()["properties"]["grader"]
    assert "grader.command" in _messages(grader)["has(self.image) || has(self.command)"]
    assert set(grader["properties"]) == {
        "image",
        "command",
        "args",
        "env",
        "envFrom",
        "resources",
        "transcriptFormat",
    }


def test_r44_the_crd_refuses_to_take_an_interrupt_back() -> None:
    spec = _spec_schema("executions.yaml")
    assert spec["properties"]["interrupt"] == {"type": "boolean"}
    assert any("interrupt cannot be taken back" in m for m in _messages(spec).values())


def test_r41_outcome_not_met_is_a_failure_classification_in_both_crds() -> None:
    for name in ("executions.yaml", "phases.yaml"):
        status = _version(name)["schema"]["openAPIV3Schema"]["properties"]["status"]
        classification = status["properties"]["failureClassification"]
        assert "outcome_not_met" in classification["enum"]


def test_r43_the_phase_crd_records_each_evaluation() -> None:
    status = _version("phases.yaml")["schema"]["openAPIV3Schema"]["properties"]["status"]
    outcome = status["properties"]["outcome"]["properties"]
    assert set(outcome["result"]["enum"]) == {
        "satisfied",
        "needs_revision",
        "max_iterations_reached",
        "failed",
        "interrupted",
    }
    evaluation = outcome["evaluations"]["items"]["properties"]
    assert {"iteration", "result", "explanation", "criteria", "usage", "graderPod"} <= set(
        evaluation
    )
    assert {"startedAt", "finishedAt"} <= set(evaluation)


def test_r43_phases_and_executions_show_an_outcome_column() -> None:
    def column(name: str) -> str | None:
        columns = _version(name)["additionalPrinterColumns"]
        return next((c["jsonPath"] for c in columns if c["name"] == "Outcome"), None)

    assert column("phases.yaml") == ".status.outcome.result"
    assert column("executions.yaml") == ".status.outcome"
