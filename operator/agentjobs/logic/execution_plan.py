"""What an Execution should do next and what its status says (R23-R27), from its Phases.

The operator lists an Execution's Phases and hands them here; the answer is
which Phase to create (at most one, in order), which running Phases to
cancel, and the Execution's whole status. Nothing here talks to the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentjobs.logic import conditions, execution
from agentjobs.logic import outcome as outcome_rules
from agentjobs.logic.phase_status import is_terminal
from agentjobs.models.contract import (
    Artifact,
    ExecutionStatus,
    PhaseStatus,
)
from agentjobs.models.resources import (
    ExecutionResourceStatus,
    ExecutionSpec,
    PhaseResourceStatus,
    PhaseSpec,
    PhaseSummary,
)
from agentjobs.models.storage import InputArtifact


@dataclass(frozen=True)
class ChildPhase:
    """One Phase of the Execution, as read from the API."""

    resource_name: str
    spec: PhaseSpec
    status: PhaseResourceStatus


@dataclass(frozen=True)
class ExecutionPlan:
    """What to do: create phase ``create_index`` (handing it ``inputs``), cancel, write status."""

    create_index: int | None
    inputs: list[InputArtifact] = field(default_factory=list)
    cancel: list[str] = field(default_factory=list)
    status: ExecutionResourceStatus = field(default_factory=ExecutionResourceStatus)


def handed_off(previous: ChildPhase | None) -> list[InputArtifact]:
    """R35: the previous phase's stored artifacts, for the next phase's inputs."""
    if previous is None:
        return []
    return [
        InputArtifact(path=a.path, url=a.url, sha256=a.sha256, size=a.size)
        for a in previous.status.artifacts
        if a.url is not None and a.sha256 is not None
    ]


def _record(child: ChildPhase) -> execution.PhaseRecord:
    status = child.status
    return execution.PhaseRecord(
        name=child.spec.name,
        status=status.status or PhaseStatus.PENDING,
        failure_classification=status.failure_classification,
        reported_failure_reason=status.reported_failure_reason,
        reported_side_effects=status.report.side_effects if status.report else None,
        artifacts=[
            Artifact(
                path=a.path, title=a.title, size=a.size, recovered=a.recovered, kept_as=a.kept_as
            )
            for a in status.artifacts
        ],
        task_outcome=status.task_outcome,
    )


def plan_execution(
    spec: ExecutionSpec,
    children: Sequence[ChildPhase],
    *,
    previous: ExecutionResourceStatus,
    generation: int | None,
    now: datetime,
) -> ExecutionPlan:
    ordered = sorted(children, key=lambda child: child.spec.index)
    summary = execution.summarize([_record(c) for c in ordered], phase_count=len(spec.phases))
    status, current, outcome = summary.status, summary.current_phase, summary.task_outcome
    create_index: int | None = None
    cancel: list[str] = []
    if status is ExecutionStatus.RUNNING:
        active = [c for c in ordered if not is_terminal(c.status)]
        if spec.cancel:
            cancel = [c.resource_name for c in active if not c.spec.cancel]
            if not active:
                status, current, outcome = (
                    ExecutionStatus.CANCELLED,
                    None,
                    outcome_rules.cancelled(
                        "The execution was cancelled before its next phase started.", now=now
                    ),
                )
        elif not active and len(ordered) < len(spec.phases):
            create_index = len(ordered)
            current = spec.phases[create_index].name
    finished = status is not ExecutionStatus.RUNNING
    message = outcome.summary if finished and outcome else f"phase {current or '-'} is running"
    return ExecutionPlan(
        create_index=create_index,
        inputs=handed_off(ordered[-1] if ordered and create_index is not None else None),
        cancel=cancel,
        status=ExecutionResourceStatus(
            status=status,
            current_phase=current,
            failure_classification=summary.failure_classification,
            reported_failure_reason=summary.reported_failure_reason,
            deliverable_produced=summary.deliverable_produced,
            reported_side_effects=summary.reported_side_effects,
            artifact_count=summary.artifact_count,
            phases=[
                PhaseSummary(
                    name=c.spec.name,
                    status=c.status.status or PhaseStatus.PENDING,
                    deliverable_recovered=bool(c.status.deliverable_recovered),
                    reported_side_effects=c.status.report.side_effects
                    if c.status.report and c.status.status is PhaseStatus.COMPLETED
                    else None,
                )
                for c in ordered
            ],
            task_outcome=outcome,
            started_at=previous.started_at or now,
            finished_at=(previous.finished_at or now) if finished else None,
            observed_generation=generation,
            conditions=conditions.conditions_for(
                status.value,
                message=message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        ),
    )
