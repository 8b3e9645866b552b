"""R37, R43: a phase's outcome (a rubric, a grader, a revise loop) and its record in status.

The spec side is a Kubernetes type (camelCase, unknown fields refused) with
the rules a schema can state written as CEL, each with a message that says
how to fix the mistake; the status side is the contract's record of each
evaluation, as users and automations read it back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field, WithJsonSchema

from agentjobs.models.contract import (
    ContractModel,
    Criterion,
    EvaluationResult,
    TranscriptFormat,
    Usage,
)
from agentjobs.models.kubernetes import (
    EnvFromSource,
    EnvVar,
    KeySelector,
    KubernetesModel,
    ResourceRequirements,
    cel_rules,
)

MAX_ITERATIONS = 20
DEFAULT_MAX_ITERATIONS = 3
TEXT_LIMIT = 64 * 1024


# The bound is a CEL rule rather than minimum/maximum so the API server's refusal says
# what the field means, not only which number it exceeded.
Iterations = Annotated[
    int,
    Field(ge=1, le=MAX_ITERATIONS),
    WithJsonSchema(
        {
            "type": "integer",
            **cel_rules(
                (
                    f"self >= 1 && self <= {MAX_ITERATIONS}",
                    f"maxIterations must be from 1 to {MAX_ITERATIONS}: how many times the "
                    "agent may try (the first try and its revisions) before the outcome "
                    "counts as not met",
                )
            ),
        }
    ),
]


class RubricSource(KubernetesModel):
    """Where to read the rubric from, instead of writing it inline."""

    config_map_key_ref: KeySelector


class GraderContainer(KubernetesModel):
    """The grader's container (R38): it runs in its own pod, apart from the agent."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": cel_rules(
            (
                "has(self.image) || has(self.command)",
                "a grader without its own image runs the phase's image, so it needs a "
                "command: set grader.command, or grader.image with a grader entrypoint",
            )
        )
    }

    image: str | None = Field(default=None, min_length=1)
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    resources: ResourceRequirements | None = None
    transcript_format: TranscriptFormat | None = None


class OutcomeSpec(KubernetesModel):
    """R37: what the phase's result must be, the rubric it is graded by, and how often the
    agent may revise it."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": cel_rules(
            (
                "has(self.rubric) != has(self.rubricFrom)",
                "an outcome needs its rubric: set exactly one of outcome.rubric (inline "
                "markdown) and outcome.rubricFrom.configMapKeyRef",
            )
        )
    }

    description: str | None = Field(default=None, min_length=1, max_length=TEXT_LIMIT)
    rubric: str | None = Field(default=None, min_length=1, max_length=TEXT_LIMIT)
    rubric_from: RubricSource | None = None
    max_iterations: Iterations = DEFAULT_MAX_ITERATIONS
    grader: GraderContainer


class Evaluation(ContractModel):
    """R43: one evaluation of the loop; ``result`` is null while its grader runs."""

    iteration: int = Field(ge=0)
    result: EvaluationResult | None = None
    explanation: str | None = None
    criteria: list[Criterion] = []
    # R57: how many criteria the grader judged that are not listed (the evaluation JSON of
    # R42 has them all).
    criteria_omitted: int | None = None
    usage: Usage | None = None
    grader_pod: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


class PhaseOutcome(ContractModel):
    """R43: a Phase's ``status.outcome``: the latest result, every evaluation, their usage."""

    result: EvaluationResult | None = None
    evaluations: list[Evaluation] = []
    usage: Usage | None = None
