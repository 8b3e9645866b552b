"""An Execution's page, worked out from what the cluster holds: its Phases in order, each
attempt and evaluation, and the verdict in words. Pure: JSON in, values out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pydantic

from agentjobs.console.rows import Row, row
from agentjobs.kube import ownership
from agentjobs.models.contract import TranscriptFormat
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.retry import AttemptRecord

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class PhaseView:
    name: str
    resource: str  # the Phase object's name
    index: int
    transcript_format: TranscriptFormat
    status: PhaseResourceStatus
    running_attempt: int | None  # the attempt whose pod runs now, not yet in ``attempts``
    problem: str | None = None  # a status the console could not read

    @property
    def attempts(self) -> list[AttemptRecord]:
        return self.status.attempts


@dataclass(frozen=True)
class ExecutionView:
    row: Row
    status: ExecutionResourceStatus
    phases: list[PhaseView]
    verdict: list[str]
    problem: str | None = None


def _status(model: type[pydantic.BaseModel], raw: object) -> tuple[Any, str | None]:
    try:
        return model.model_validate(raw or {}), None
    except pydantic.ValidationError as error:
        return model(), f"the status could not be read whole: {error.error_count()} errors"


def phase_view(phase: JsonObject) -> PhaseView:
    spec = phase.get("spec") or {}
    status, problem = _status(PhaseResourceStatus, phase.get("status"))
    recorded = {attempt.number for attempt in status.attempts}
    running = (
        status.attempt if status.attempt is not None and status.attempt not in recorded else None
    )
    try:
        transcript_format = TranscriptFormat(spec.get("transcriptFormat") or "text")
    except ValueError:
        transcript_format = TranscriptFormat.TEXT
    index = spec.get("index")
    return PhaseView(
        name=str(spec.get("name") or ""),
        resource=str((phase.get("metadata") or {}).get("name") or ""),
        index=index if isinstance(index, int) else 0,
        transcript_format=transcript_format,
        status=status,
        running_attempt=running,
        problem=problem,
    )


def execution_view(execution: JsonObject, phases: list[JsonObject]) -> ExecutionView:
    """The page of ``execution``; only the Phases it owns (by UID) are its own."""
    uid = str((execution.get("metadata") or {}).get("uid") or "")
    owned = [phase_view(p) for p in phases if ownership.owned_by(p, uid)]
    status, problem = _status(ExecutionResourceStatus, execution.get("status"))
    return ExecutionView(
        row=row(execution),
        status=status,
        phases=sorted(owned, key=lambda p: p.index),
        verdict=verdict_in_words(status),
        problem=problem,
    )


def verdict_in_words(status: ExecutionResourceStatus) -> list[str]:
    """The verdict as sentences a person reads first."""
    if status.status is None:
        return ["The operator has not written a status yet."]
    said = [f"The Execution is {status.status.value}."]
    if status.current_phase and status.status.value == "running":
        said.append(f"Phase {status.current_phase} is running.")
    outcome = status.task_outcome
    if outcome is not None:
        by = "the agent" if outcome.source.value == "agent" else "the operator"
        said.append(f"Task outcome: {outcome.status.value.replace('_', ' ')}, as {by} saw it.")
        if outcome.summary:
            said.append(outcome.summary)
        for blocker in outcome.blockers:
            again = "can be retried" if blocker.recoverable else "cannot be retried as it is"
            said.append(f"Blocked by {blocker.type}: {blocker.message} ({again}).")
    if status.failure_classification is not None:
        said.append(f"Failure classification: {status.failure_classification.value}.")
    if status.reported_side_effects is not None:
        said.append(f"Side effects the agent reported: {status.reported_side_effects.value}.")
    if status.deliverable_produced is not None:
        made = "was" if status.deliverable_produced else "was not"
        said.append(f"A deliverable {made} produced.")
    return said
