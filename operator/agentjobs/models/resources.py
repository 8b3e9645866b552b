"""The Execution and Phase custom resources (agentjobs.io/v1alpha1), spec and status.

These models are the single source of truth: ``crds/*.yaml`` is generated
from them (``agentjobs crds``), the operator parses what it reads with them
and writes statuses through them. Validation the schema alone cannot state
is written as CEL rules beside the field it concerns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from agentjobs.models import outcomes, placement
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
    TranscriptFormat,
    Usage,
)
from agentjobs.models.kubernetes import (
    DNS_LABEL,
    EnvFromSource,
    EnvVar,
    KeySelector,
    KubernetesModel,
    PodSecurityContext,
    ResourceRequirements,
    SecurityContext,
    SubdomainName,
)
from agentjobs.models.limits import ExecutionBudget, ExecutionLimits, Limits, LimitUse
from agentjobs.models.notifications import MAX_TARGETS, NotificationRecord, NotifyTarget
from agentjobs.models.repositories import (
    MAX_REPOSITORIES,
    PhaseRepository,
    Repositories,
    RepositoryName,
    RepositoryStatus,
)
from agentjobs.models.retry import AttemptRecord, RetryPolicy
from agentjobs.models.storage import HandoffRef

GROUP = "agentjobs.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
MAX_PHASES = 32
MAX_TURNS_NEEDS_EVENTS = (
    "limits.maxTurns needs an agent CLI's transcript: a text log marks no turns; "
    "set the phase's transcriptFormat, or remove maxTurns"
)


def cel(rule: str, message: str, **extra: str) -> dict[str, str]:
    """One ``x-kubernetes-validations`` entry."""
    return {"rule": rule, "message": message, **extra}


def validations(*rules: dict[str, str]) -> dict[str, Any]:
    return {"x-kubernetes-validations": list(rules)}


PhaseName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=40,
        json_schema_extra=validations(
            cel(
                f"self.matches('{DNS_LABEL}')",
                "must be a DNS label: lowercase letters, digits and '-', "
                "starting and ending with a letter or digit",
            )
        ),
    ),
]


class PromptSource(KubernetesModel):
    """Where to read a phase's prompt from, instead of writing it inline."""

    config_map_key_ref: KeySelector


class PhaseSettings(KubernetesModel):
    """What can be set on every phase, or once under ``spec.defaults``."""

    image: str | None = Field(default=None, min_length=1)
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    env_from: list[EnvFromSource] | None = None
    resources: ResourceRequirements | None = None
    timeout_seconds: int | None = Field(default=None, ge=1, le=7 * 24 * 3600)
    transcript_format: TranscriptFormat | None = None
    outputs: list[str] | None = None
    service_account_name: SubdomainName | None = None
    pod_security_context: PodSecurityContext | None = None
    security_context: SecurityContext | None = None
    outcome: outcomes.OutcomeSpec | None = None
    image_pull_secrets: list[placement.ImagePullSecret] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[placement.Toleration] | None = None
    affinity: placement.Affinity | None = None
    priority_class_name: placement.ClassName | None = None
    runtime_class_name: placement.ClassName | None = None
    workspace: placement.Workspace | None = None
    retry: RetryPolicy | None = None  # R45
    limits: Limits | None = None  # R67
    # With storage, an ended phase's pods are deleted (their logs are stored) unless this is set.
    keep_pods: bool | None = None


class PhaseTemplate(PhaseSettings):
    """One phase of an Execution."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": validations(
            cel(
                "has(self.prompt) != has(self.promptFrom)",
                "set exactly one of prompt and promptFrom",
            )
        )
    }

    name: PhaseName
    prompt: str | None = None
    prompt_from: PromptSource | None = None
    # The Execution's repositories this phase checks out, by name; omitted: all of them.
    repositories: list[RepositoryName] | None = Field(default=None, max_length=MAX_REPOSITORIES)


class ArtifactStorage(KubernetesModel):
    """Where this Execution's artifacts go, instead of the operator's defaults."""

    bucket: str | None = Field(
        default=None, min_length=3, max_length=63, pattern=r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$"
    )
    prefix: str | None = Field(
        default=None,
        max_length=200,
        json_schema_extra=validations(
            cel(
                "!self.split('/').exists(p, p == '..' || p == '.' || p == 'namespaces')",
                "prefix must not contain '.', '..' or 'namespaces' segments"
                " (the operator puts namespaces/<namespace> after it)",
            )
        ),
    )


class ResumeFrom(KubernetesModel):
    """R48: the ended Execution, in the same namespace, whose completed phases are inherited."""

    name: SubdomainName


class ExecutionSpec(KubernetesModel):
    """An ordered list of agent phases, run one at a time."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": validations(
            cel(
                "self.phases.all(p, has(p.image)"
                " || (has(self.defaults) && has(self.defaults.image)))",
                "every phase needs an image: set it on the phase or in spec.defaults",
            ),
            cel(
                "!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",
                "a cancelled execution cannot be resumed: create a new Execution",
                reason="FieldValueForbidden",
            ),
            cel(
                "!has(oldSelf.interrupt) || !oldSelf.interrupt"
                " || (has(self.interrupt) && self.interrupt)",
                "an interrupt cannot be taken back: create a new Execution",
                reason="FieldValueForbidden",
            ),
            # R51: status.notifications[] refers to targets by their index.
            cel(
                "has(self.notify) == has(oldSelf.notify)"
                " && (!has(self.notify) || self.notify == oldSelf.notify)",
                "notify cannot be changed once the execution exists: create a new Execution",
                reason="FieldValueForbidden",
            ),
            cel(
                "self.phases.all(p, !has(p.repositories) || p.repositories.all(n,"
                " has(self.repositories) && self.repositories.exists(r, r.name == n)))",
                "a phase may only name repositories listed in spec.repositories",
            ),
            cel(
                "has(self.repositories) == has(oldSelf.repositories)"
                " && (!has(self.repositories) || self.repositories == oldSelf.repositories)",
                "repositories cannot be changed once the execution exists: create a new Execution",
                reason="FieldValueForbidden",
            ),
            cel(
                "self.phases.all(p, !((has(p.limits) && has(p.limits.maxTurns))"
                " || (has(self.defaults) && has(self.defaults.limits)"
                " && has(self.defaults.limits.maxTurns)))"
                " || (has(p.transcriptFormat) ? p.transcriptFormat != 'text'"
                " : (has(self.defaults) && has(self.defaults.transcriptFormat)"
                " && self.defaults.transcriptFormat != 'text')))",
                MAX_TURNS_NEEDS_EVENTS,
            ),
            # R48: what it inherited is recorded once, from the parent named here.
            cel(
                "has(self.resumeFrom) == has(oldSelf.resumeFrom)"
                " && (!has(self.resumeFrom) || self.resumeFrom == oldSelf.resumeFrom)",
                "resumeFrom cannot be changed once the execution exists: create a new Execution",
                reason="FieldValueForbidden",
            ),
        )
    }

    phases: list[PhaseTemplate] = Field(
        min_length=1,
        max_length=MAX_PHASES,
        json_schema_extra=validations(
            cel(
                "self.all(p, self.exists_one(q, q.name == p.name))",
                "phase names must be unique within an execution",
            ),
            cel(
                "self == oldSelf",
                "phases cannot be changed once the execution exists: create a new Execution",
            ),
        ),
    )
    defaults: PhaseSettings | None = None
    cancel: bool = False
    interrupt: bool = False  # R44
    artifacts: ArtifactStorage | None = None
    artifact_retention: Literal["Retain", "Delete"] = "Retain"
    notify: list[NotifyTarget] = Field(default=[], max_length=MAX_TARGETS)  # R49
    # Deleted, with everything it owns, this long after it finished (as a Job's).
    ttl_seconds_after_finished: int | None = Field(default=None, ge=0, le=366 * 24 * 3600)
    resume_from: ResumeFrom | None = None  # R48
    repositories: Repositories = []
    limits: ExecutionLimits | None = None  # R71: every phase, attempt and grader together


class PhaseSpec(PhaseSettings):
    """A Phase as the operator creates it: one phase of an Execution, defaults applied."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": validations(
            cel(
                "!(has(self.limits) && has(self.limits.maxTurns))"
                " || (has(self.transcriptFormat) && self.transcriptFormat != 'text')",
                MAX_TURNS_NEEDS_EVENTS,
            )
        )
    }

    execution_name: SubdomainName
    index: int = Field(ge=0)
    name: PhaseName
    prompt: str | None = None
    prompt_from: PromptSource | None = None
    cancel: bool = False
    interrupt: bool = False  # R44, from the Execution
    artifacts: ArtifactStorage | None = None
    # R35: the previous phase's artifacts, by the manifest that lists them all.
    inputs: HandoffRef | None = None
    # R63: the repositories checked out before the agent starts, and from which commit.
    repositories: list[PhaseRepository] | None = Field(default=None, max_length=MAX_REPOSITORIES)
    budget: ExecutionBudget | None = None  # R71: the Execution's limits, and what was used


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

    Written when the first bytes arrive and whenever a report is read, so that a
    restarted operator re-reading the log can prove the log still begins with
    those bytes (a rotated or truncated log does not), and posts each
    ``ReportRead`` event once.
    """

    bytes_read: int = Field(ge=0)
    sha256: str
    reports_read: int = Field(default=0, ge=0)
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
    repositories: list[RepositoryStatus] | None = None  # each one's latest phase
    observed_generation: int | None = None
    conditions: Conditions = []
