"""R23-R27: an execution's fields from the phases it ran.

Decisions where the contract is silent: ``current_phase`` names the phase
that is running or that ended the execution, and is None once every phase
completed; a completed execution's outcome is its last phase's, lowered to
``partial_success`` when R24 reports a denied or failed write; a failed,
cancelled or interrupted execution's outcome is that of the phase that
ended it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentjobs.contract.outcome import outcome
from agentjobs.contract.text import usage as usage_rules
from agentjobs.models.contract import (
    Artifact,
    ExecutionStatus,
    FailureClassification,
    FailureReason,
    PhaseStatus,
    SideEffects,
    TaskOutcome,
    TaskOutcomeStatus,
    Usage,
)

SIDE_EFFECT_SEVERITY = {
    SideEffects.NONE: 0,
    SideEffects.SUCCEEDED: 1,
    SideEffects.DENIED: 2,
    SideEffects.FAILED: 3,
}
_ENDING = {
    PhaseStatus.FAILED: ExecutionStatus.FAILED,
    PhaseStatus.CANCELLED: ExecutionStatus.CANCELLED,
    PhaseStatus.INTERRUPTED: ExecutionStatus.INTERRUPTED,
}


@dataclass(frozen=True)
class PhaseRecord:
    """What the execution reads from one of its phases.

    ``inherited`` marks a phase a resumed execution took over from its parent
    (R27): it counts toward finishing the execution but not toward its fields.
    """

    name: str
    status: PhaseStatus
    failure_classification: FailureClassification | None = None
    reported_failure_reason: FailureReason | None = None
    reported_side_effects: SideEffects | None = None
    artifacts: Sequence[Artifact] = ()
    task_outcome: TaskOutcome | None = None
    usage: Usage | None = None
    inherited: bool = False
    # How many artifacts the phase has, when ``artifacts`` lists only the first of them.
    artifact_count: int | None = None


@dataclass(frozen=True)
class ExecutionSummary:
    status: ExecutionStatus
    current_phase: str | None
    failure_classification: FailureClassification | None
    reported_failure_reason: FailureReason | None
    deliverable_produced: bool
    reported_side_effects: SideEffects | None
    artifact_count: int
    task_outcome: TaskOutcome | None
    usage: Usage | None = None
    phases: list[PhaseRecord] = field(default_factory=list)


def counted_side_effects(
    status: PhaseStatus | None, reported: SideEffects | None
) -> SideEffects | None:
    """R24: a phase's reported side effects count only once it completed."""
    return reported if status is PhaseStatus.COMPLETED else None


def most_severe_side_effects(phases: Sequence[PhaseRecord]) -> SideEffects | None:
    """R24: the most severe word among completed phases (failed > denied > succeeded > none)."""
    counted = (counted_side_effects(p.status, p.reported_side_effects) for p in phases)
    words = [word for word in counted if word is not None]
    return max(words, key=SIDE_EFFECT_SEVERITY.__getitem__) if words else None


def deliverable_produced(phases: Sequence[PhaseRecord]) -> bool:
    """R25: an artifact of a completed phase, or one kept by a failed phase."""
    for phase in phases:
        if phase.status is PhaseStatus.COMPLETED and phase.artifacts:
            return True
        if phase.status is PhaseStatus.FAILED and any(
            artifact.kept_as == "failed_phase" for artifact in phase.artifacts
        ):
            return True
    return False


def summarize(phases: Sequence[PhaseRecord], *, phase_count: int) -> ExecutionSummary:
    """The execution's fields, given the records of the phases started so far, in order."""
    own = [phase for phase in phases if not phase.inherited]  # R27
    side_effects = most_severe_side_effects(own)
    ending = next((phase for phase in phases if phase.status in _ENDING), None)
    unfinished = next(
        (phase for phase in phases if phase.status is not PhaseStatus.COMPLETED), None
    )
    classification: FailureClassification | None = None
    failure_reason: FailureReason | None = None
    task_outcome: TaskOutcome | None = None
    current_phase: str | None
    if ending is not None:  # R23, R26
        status, current_phase = _ENDING[ending.status], ending.name
        task_outcome = ending.task_outcome
        if ending.status is PhaseStatus.FAILED:
            classification = ending.failure_classification
            failure_reason = ending.reported_failure_reason
    elif unfinished is not None or len(phases) < phase_count:
        status = ExecutionStatus.RUNNING
        current_phase = unfinished.name if unfinished else None
    else:
        status, current_phase = ExecutionStatus.COMPLETED, None
        task_outcome = phases[-1].task_outcome if phases else None
        if (
            task_outcome is not None
            and task_outcome.status is TaskOutcomeStatus.SUCCESS
            and outcome.writes_incomplete(side_effects)
        ):
            task_outcome = task_outcome.model_copy(
                update={"status": TaskOutcomeStatus.PARTIAL_SUCCESS}
            )
    return ExecutionSummary(
        status=status,
        current_phase=current_phase,
        failure_classification=classification,
        reported_failure_reason=failure_reason,
        deliverable_produced=deliverable_produced(own),
        reported_side_effects=side_effects,
        artifact_count=sum(
            len(phase.artifacts) if phase.artifact_count is None else phase.artifact_count
            for phase in own
        ),
        task_outcome=task_outcome,
        usage=usage_rules.total(phase.usage for phase in own),  # R13f, R27
        phases=list(phases),
    )
