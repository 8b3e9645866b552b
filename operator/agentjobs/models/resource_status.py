"""The status of the Execution and Phase custom resources: what the operator writes back.

Beside their specs (``models/resources.py``), from which ``crds/*.yaml`` is generated with
them; each status has one writer (R53).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from agentjobs.models import outcomes
from agentjobs.models.contract import (
    ContractModel,
    EvaluationResult,
    ExecutionStatus,
    FailureClassification,
    FailureReason,
    PhaseStatus,
    Report,
    SideEffects,
    SystemFailure,
    TaskOutcome,
    Usage,
)
from agentjobs.models.limits import LimitUse
from agentjobs.models.notifications import NotificationRecord
from agentjobs.models.repositories import (
    RepositoryStatus,
)
from agentjobs.models.retry import AttemptRecord
from agentjobs.models.storage import HandoffRef


class Condition(ContractModel):
    """A ``metav1.Condition``."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str
    message: str = ""
    last_transition_time: datetime
    observed_generation: int | None = None


Conditions = Annotated[
    list[Condition],
    Field(
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}
    ),
]


class ArtifactStatus(ContractModel):
    """One artifact as a Phase's status lists it (its content lives in storage)."""

    path: str
    title: str
    size: int
    sha256: str | None = None
    url: str | None = None
    recovered: bool = False
    kept_as: Literal["failed_phase", "partial"] | None = None


class LogProgress(ContractModel):
    """How much of the agent's log the operator has read (R14).

    Written when the first bytes arrive, so that a restarted operator re-reading
    the log can prove the log still begins with those bytes (a rotated or
    truncated log does not).
    """

    bytes_read: int = Field(ge=0)
    sha256: str
    # R70: the operator asked for the agent's stop, because of this limit.
    stopped_by: SystemFailure | None = None


class RunCheckpoint(ContractModel):
    """The run's facts, written once the agent's log has been read to its end.

    From here on the log is never read again: a restarted operator finishes the
    phase from this record, even when the pod is gone. ``lastMessage`` is kept
    only until the phase ends (recovery, R29-R31, may need it).
    """

    exit_code: int | None = None
    stream_intact: bool
    cancelled: bool = False
    interrupted: bool = False
    system_failure: SystemFailure | None = None
    agent_cli_error: SystemFailure | None = None
    report: Report
    last_message: str | None = None
    terminal_event_seen: bool = False
    usage: Usage | None = None
    # R58: the stored transcript's size and SHA-256; ``transcriptTruncated`` when the log
    # passed the operator's --max-transcript-bytes and only its beginning was stored.
    transcript_bytes: int = Field(ge=0)
    transcript_sha256: str
    transcript_truncated: bool = False


class PhaseResourceStatus(ContractModel):
    """What a Phase reports about itself."""

    status: PhaseStatus | None = None
    report: Report | None = None
    exit_code: int | None = None
    stream_intact: bool | None = None
    failure_classification: FailureClassification | None = None
    reported_failure_reason: FailureReason | None = None
    task_outcome: TaskOutcome | None = None
    usage: Usage | None = None
    limits: list[LimitUse] = []  # R70: each limit set and how much of it was used
    outcome: outcomes.PhaseOutcome | None = None
    # At most the first ARTIFACTS_LISTED, in path order; every one is in ``handoff``.
    artifacts: list[ArtifactStatus] = []
    artifact_count: int | None = None
    handoff: HandoffRef | None = None
    # R28: entries of the output directory that are not artifacts, and a warning for
    # each of the first ARTIFACTS_LISTED of them (the harvester's manifest has them all).
    skipped_count: int | None = None
    artifact_warnings: list[str] = []
    deliverable_recovered: bool | None = None
    error: str | None = None
    pod_name: str | None = None
    attempt: int | None = None
    attempts: list[AttemptRecord] = []  # R47
    log: LogProgress | None = None
    run: RunCheckpoint | None = None
    repositories: list[RepositoryStatus] | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    observed_generation: int | None = None
    conditions: Conditions = []


class PhaseSummary(ContractModel):
    """One phase as its Execution lists it."""

    name: str
    status: PhaseStatus
    deliverable_recovered: bool = False
    reported_side_effects: SideEffects | None = None
    outcome: EvaluationResult | None = None
    # R48: the Execution that ran this phase, for a phase a resumed execution inherited.
    inherited_from: str | None = None


class ResumedFrom(ContractModel):
    """R48: the parent a resumed Execution inherited from, and what its first phase receives."""

    # Recorded once, so that later reconciles never read the parent again, nor take a
    # parent re-created under the same name for it.

    name: str
    uid: str
    handoff: HandoffRef | None = None
    # R63: where the parent's completed phases left each repository.
    repositories: list[RepositoryStatus] | None = None


class QueuePlace(ContractModel):
    """R75: the queue an Execution waits in, and its place (1: next; None once admitted)."""

    name: str
    position: int | None = None
    admitted_at: datetime | None = None


class ExecutionResourceStatus(ContractModel):
    """What an Execution reports about itself (R23-R27, R36)."""

    status: ExecutionStatus | None = None
    current_phase: str | None = None
    failure_classification: FailureClassification | None = None
    reported_failure_reason: FailureReason | None = None
    deliverable_produced: bool | None = None
    reported_side_effects: SideEffects | None = None
    artifact_count: int | None = None
    phases: list[PhaseSummary] = []
    outcome: EvaluationResult | None = None  # the latest phase outcome's result, if any
    task_outcome: TaskOutcome | None = None
    usage: Usage | None = None
    limits: list[LimitUse] = []  # R71: each of spec.limits and how much of it was used
    started_at: datetime | None = None
    finished_at: datetime | None = None
    notifications: list[NotificationRecord] = []  # R51
    resumed_from: ResumedFrom | None = None  # R48
    queue: QueuePlace | None = None  # R75
    repositories: list[RepositoryStatus] | None = None  # each one's latest phase
    observed_generation: int | None = None
    conditions: Conditions = []
