"""R41, R44: a phase's resolution when its outcome loop ends with an evaluation.

- ``satisfied``: the phase ``completed``; its outcome is its last agent
  iteration's (the grader's verdict is in ``status.outcome``).
- ``max_iterations_reached``: ``failed``, ``outcome_not_met`` (apart from
  ``platform``), no reported failure reason, a system ``partial_success``
  with terminal reason ``max_iterations`` and one recoverable blocker per
  unmet criterion; the last iteration's files are kept ``(kept from a
  failed phase)`` and count as a deliverable (R25).
- ``failed``: ``failed``, ``platform``, the outcome derived from why (R36).
- ``interrupted``: ``interrupted`` (R22a), the work kept ``(partial)``.

An iteration that resolved failed, cancelled or interrupted ends the phase
by R16-R22a alone (R37); nothing here applies to it.

Decisions where the contract is silent: when the last grade listed no unmet
criterion, ``max_iterations_reached`` carries one blocker with the grader's
explanation, so that an automation always sees why; blocker texts are cut
at 1 KiB and at most 20 are listed, as an agent's own are (R36a; the rest
are counted in ``blockersOmitted``, R57), and the summary at 4 KiB.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agentjobs.contract.artifacts import artifact_rule
from agentjobs.contract.grading.evaluation import INTERRUPTED, Evaluated
from agentjobs.contract.outcome import outcome
from agentjobs.contract.outcome.status_budget import BLOCKERS_LISTED
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import (
    Blocker,
    Criterion,
    EvaluationResult,
    FailureClassification,
    FailureKind,
    KeptAs,
    PhaseStatus,
    SystemFailure,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)

MAX_ITERATIONS_REASON = "max_iterations"


@dataclass(frozen=True)
class LoopEnd:
    """The phase's resolution from its loop, and how its last iteration's files are kept.

    Its ``reportedFailureReason`` is null at every end: the last agent iteration completed.
    """

    status: PhaseStatus
    failure_classification: FailureClassification | None
    cause: SystemFailure | None
    task_outcome: TaskOutcome

    @property
    def kept_as(self) -> KeptAs | None:
        """How the last iteration's files are kept (R34, R41)."""
        return artifact_rule.kept_as(self.status)


def phase_end(
    evaluated: Evaluated,
    *,
    criteria: list[Criterion],
    explanation: str | None,
    agent_outcome: TaskOutcome,
    max_iterations: int,
    now: datetime,
) -> LoopEnd:
    """R41: the phase after the evaluation that ended its loop (any result but
    ``needs_revision``, which starts the next iteration instead)."""
    result = evaluated.result
    if result is EvaluationResult.SATISFIED:
        return LoopEnd(PhaseStatus.COMPLETED, None, None, agent_outcome)
    if result is EvaluationResult.MAX_ITERATIONS_REACHED:
        return LoopEnd(
            PhaseStatus.FAILED,
            FailureClassification.OUTCOME_NOT_MET,
            None,
            _not_met(criteria, explanation, max_iterations=max_iterations, now=now),
        )
    if result is EvaluationResult.INTERRUPTED:
        cause = evaluated.cause or INTERRUPTED
        return LoopEnd(PhaseStatus.INTERRUPTED, None, cause, outcome.from_failure(cause, now=now))
    if result is EvaluationResult.FAILED:
        cause = evaluated.cause or SystemFailure(
            kind=FailureKind.GRADER_FAILED, code="grader_failed", message="the grader failed"
        )
        return LoopEnd(
            PhaseStatus.FAILED,
            FailureClassification.PLATFORM,
            cause,
            outcome.from_failure(cause, now=now),
        )
    raise ValueError(f"a {result} evaluation does not end the loop: the next iteration runs")


def _not_met(
    criteria: list[Criterion], explanation: str | None, *, max_iterations: int, now: datetime
) -> TaskOutcome:
    plural = "" if max_iterations == 1 else "s"
    summary = f"The rubric was not met after {max_iterations} iteration{plural}."
    if explanation:
        summary = agent_text.cut(f"{summary} {explanation}", agent_text.LONG_TEXT_BYTES)
    unmet = [c for c in criteria if not c.met]
    blockers = [
        Blocker(
            type="unmet_criterion",
            message=agent_text.cut(
                f"{c.name}: {c.feedback}" if c.feedback else c.name, agent_text.SHORT_TEXT_BYTES
            ),
            recoverable=True,
        )
        for c in unmet[:BLOCKERS_LISTED]
    ]
    if not blockers:
        message = agent_text.cut(summary, agent_text.SHORT_TEXT_BYTES)
        blockers = [Blocker(type="outcome_not_met", message=message, recoverable=True)]
    return TaskOutcome(
        status=TaskOutcomeStatus.PARTIAL_SUCCESS,
        source=TaskOutcomeSource.SYSTEM,
        summary=summary,
        blockers=blockers,
        blockers_omitted=max(len(unmet) - BLOCKERS_LISTED, 0) or None,
        terminal_reason=MAX_ITERATIONS_REASON,
        reported_at=now,
    )
