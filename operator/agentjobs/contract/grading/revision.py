"""R42: what the next agent iteration is given after a ``needs_revision`` evaluation.

The same prompt followed by a section with the evaluation's explanation and
each unmet criterion's feedback; the evaluation as JSON in the feedback
directory; the revised iteration's own previous files under ``previous/``
(the previous phase's stay under ``input/``).

Decisions where the contract is silent: the section names where the files
are, so an agent that only reads its prompt still finds them; the JSON
document uses the grade block's own snake_case names (the grader's words as
it wrote them, uncut), so an agent can read it as it would a grade; an unmet
criterion without feedback is listed by name, and feedback over several
lines is indented under its criterion.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentjobs.kube import in_pod
from agentjobs.models.contract import Criterion, EvaluationResult
from agentjobs.models.outcomes import PhaseOutcome
from agentjobs.models.storage import HandoffRef


def feedback_path(iteration: int) -> str:
    """Where evaluation ``iteration`` (0-based) is written for the next iteration."""
    return f"{in_pod.FEEDBACK}/evaluation-{iteration}.json"


def evaluation_document(
    *,
    iteration: int,
    result: EvaluationResult,
    explanation: str | None,
    criteria: list[Criterion],
) -> str:
    """The evaluation as the JSON file the next iteration reads (R42)."""
    document = {
        "iteration": iteration,
        "result": result.value,
        "explanation": explanation,
        "criteria": [criterion.model_dump(mode="json") for criterion in criteria],
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def revision_section(
    *,
    iteration: int,
    max_iterations: int,
    explanation: str | None,
    criteria: list[Criterion],
) -> str:
    """The section that follows the prompt in iteration ``iteration + 1`` (R42)."""
    unmet = [criterion for criterion in criteria if not criterion.met]
    lines = [
        f"## Revision: iteration {iteration + 2} of at most {max_iterations}",
        "",
        f"A grader checked the result of iteration {iteration + 1} against the rubric and "
        "found that it needs revision. Revise the work to meet every criterion below.",
        f"- Your files from that iteration: {in_pod.PREVIOUS}/",
        f"- The whole evaluation as JSON: {feedback_path(iteration)}",
        "",
        "### The grader's explanation",
        "",
        explanation.strip() if explanation and explanation.strip() else "(none given)",
    ]
    if unmet:
        lines += ["", "### Criteria not met", ""]
        for criterion in unmet:
            feedback = (criterion.feedback or "").strip().replace("\n", "\n  ")
            lines.append(f"- {criterion.name}: {feedback}" if feedback else f"- {criterion.name}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Revision:
    """What a revised attempt gets besides the phase's prompt: the section that follows it,
    the evaluation file (its name and text), and the previous attempt's hand-off manifest."""

    section: str
    feedback_key: str
    feedback: str
    previous: HandoffRef


def revision_for(
    *,
    iteration: int,
    max_iterations: int,
    explanation: str | None,
    criteria: list[Criterion],
    previous: HandoffRef,
) -> Revision:
    """The revision after evaluation ``iteration`` asked for one (R42)."""
    return Revision(
        section=revision_section(
            iteration=iteration,
            max_iterations=max_iterations,
            explanation=explanation,
            criteria=criteria,
        ),
        feedback_key=feedback_path(iteration).rsplit("/", 1)[1],
        feedback=evaluation_document(
            iteration=iteration,
            result=EvaluationResult.NEEDS_REVISION,
            explanation=explanation,
            criteria=criteria,
        ),
        previous=previous,
    )


def recorded_revision(
    recorded: PhaseOutcome | None, previous: HandoffRef | None, *, max_iterations: int
) -> Revision | None:
    """The revision of the attempt that follows the latest evaluation, rebuilt from the status
    record (after a restart, R42), when that evaluation asked for one; its texts are the
    record's (cut). A retried revised attempt (R45) gets the same revision again."""
    if recorded is None or previous is None or not recorded.evaluations:
        return None
    latest = max(recorded.evaluations, key=lambda e: e.iteration)
    if latest.result is not EvaluationResult.NEEDS_REVISION:
        return None
    return revision_for(
        iteration=latest.iteration,
        max_iterations=max_iterations,
        explanation=latest.explanation,
        criteria=latest.criteria,
        previous=previous,
    )
