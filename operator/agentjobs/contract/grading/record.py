"""R43: the Phase's ``status.outcome`` as the loop goes, and the Events that mark it.

Each function takes the recorded outcome and returns the next one, so a
restarted operator that replays a step records nothing twice: an
evaluation is started once per iteration and finished once.

Decisions where the contract is silent: ``result`` is the latest
*finished* evaluation's result (an evaluation under way has none yet),
except that an interrupt marks it ``interrupted`` even between evaluations;
``usage`` is the sum over evaluations, and the phase's own ``status.usage``
adds it to its agent iterations', so that the Execution's sum is what the
whole run spent. The grader's explanation is cut to 4 KiB in status, each
criterion's name and feedback to 1 KiB, and at most 50 criteria are listed,
the rest counted in ``criteriaOmitted`` (R57; the evaluation JSON of R42 has
them whole).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agentjobs.contract.outcome import status_budget
from agentjobs.contract.text import agent_text, usage
from agentjobs.models.contract import Criterion, EvaluationResult, Usage
from agentjobs.models.outcomes import Evaluation, PhaseOutcome

ONGOING_INTERVAL = timedelta(seconds=30)
START_EVENT = "OutcomeEvaluationStart"
ONGOING_EVENT = "OutcomeEvaluationOngoing"
END_EVENT = "OutcomeEvaluationEnd"


def iteration_of(recorded: PhaseOutcome | None, *, grader_pod: str) -> int:
    """The iteration ``grader_pod`` grades: its evaluation's, or the next one when it has
    not started. Not the attempt's number: a retried attempt (R45) is no iteration."""
    evaluations = recorded.evaluations if recorded else []
    found = next((e.iteration for e in evaluations if e.grader_pod == grader_pod), None)
    return len(evaluations) if found is None else found


def started(
    recorded: PhaseOutcome | None, *, iteration: int, grader_pod: str, now: datetime
) -> PhaseOutcome:
    """Evaluation ``iteration`` has begun: its grader pod is ``grader_pod``."""
    current = recorded or PhaseOutcome()
    if any(e.iteration == iteration for e in current.evaluations):
        return current
    evaluation = Evaluation(iteration=iteration, grader_pod=grader_pod, started_at=now)
    return current.model_copy(update={"evaluations": [*current.evaluations, evaluation]})


def finished(
    recorded: PhaseOutcome,
    *,
    iteration: int,
    result: EvaluationResult,
    explanation: str | None,
    criteria: list[Criterion],
    spent: Usage | None,
    now: datetime,
) -> PhaseOutcome:
    """Evaluation ``iteration`` ended with ``result``; a finished one is not rewritten."""
    listed, omitted = status_budget.criteria(
        criteria,
        limit=status_budget.CRITERIA_LISTED,
        text=status_budget.FIELD_CAPS.short_text,
    )
    ended = {
        "result": result,
        "explanation": None
        if explanation is None
        else agent_text.cut(explanation, status_budget.FIELD_CAPS.long_text),
        "criteria": listed,
        "criteria_omitted": omitted,
        "usage": spent,
        "finished_at": now,
    }
    evaluations = list(recorded.evaluations)
    found = next((i for i, e in enumerate(evaluations) if e.iteration == iteration), None)
    if found is None:  # its start was never recorded: the end is still worth keeping
        evaluations.append(Evaluation.model_validate({"iteration": iteration, **ended}))
    elif evaluations[found].result is None:
        evaluations[found] = evaluations[found].model_copy(update=ended)
    else:
        return recorded
    return PhaseOutcome(
        result=result,
        evaluations=evaluations,
        usage=usage.total(e.usage for e in evaluations),
    )


def interrupted(recorded: PhaseOutcome | None, *, now: datetime) -> PhaseOutcome:
    """R44: the evaluation under way, if any, ends ``interrupted``, and so does the outcome."""
    current = recorded or PhaseOutcome()
    evaluations = [
        e.model_copy(update={"result": EvaluationResult.INTERRUPTED, "finished_at": now})
        if e.result is None
        else e
        for e in current.evaluations
    ]
    return current.model_copy(
        update={"result": EvaluationResult.INTERRUPTED, "evaluations": evaluations}
    )


def phase_usage(agent_iterations: Usage | None, recorded: PhaseOutcome | None) -> Usage | None:
    """The phase's ``status.usage``: its agent iterations' and its graders' together."""
    return usage.add(agent_iterations, recorded.usage if recorded else None)


def ongoing_due(started_at: datetime, last_ongoing: datetime | None, *, now: datetime) -> bool:
    """Whether an ``OutcomeEvaluationOngoing`` Event is due: every 30 s while a grader runs."""
    return now - (last_ongoing or started_at) >= ONGOING_INTERVAL


def start_message(evaluation: Evaluation, *, max_iterations: int) -> str:
    return (
        f"iteration {evaluation.iteration}: evaluation started, grader pod "
        f"{evaluation.grader_pod} (at most {max_iterations} iterations)"
    )


def ongoing_message(evaluation: Evaluation, *, now: datetime) -> str:
    began = evaluation.started_at or now
    return f"iteration {evaluation.iteration}: the grader has run {_seconds(now - began)}"


def end_message(evaluation: Evaluation) -> str:
    result = evaluation.result.value if evaluation.result else "unknown"
    unmet = [c.name for c in evaluation.criteria if not c.met]
    detail = f"; not met: {', '.join(unmet)}" if unmet else ""
    first_line = (evaluation.explanation or "").strip().split("\n", 1)[0]
    said = f": {first_line}" if first_line else ""
    return agent_text.cut(f"iteration {evaluation.iteration}: {result}{detail}{said}", 1024)


def _seconds(span: timedelta) -> str:
    return f"{int(span.total_seconds())}s"
