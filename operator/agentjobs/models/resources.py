"""The Execution and Phase custom resources (agentjobs.io/v1alpha1): their specs.

These models, with the statuses in ``models/resource_status.py``, are the single source of
truth: ``crds/*.yaml`` is generated from them (``agentjobs crds``), and the operator parses
what it reads with them. Validation the schema alone cannot state is written as CEL rules
beside the field it concerns.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from agentjobs.models import outcomes, placement
from agentjobs.models.contract import (
    TranscriptFormat,
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
from agentjobs.models.limits import ExecutionBudget, ExecutionLimits, Limits
from agentjobs.models.notifications import MAX_TARGETS, NotifyTarget
from agentjobs.models.repositories import (
    MAX_REPOSITORIES,
    PhaseRepository,
    Repositories,
    RepositoryName,
)
from agentjobs.models.retry import RetryPolicy
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
    # R73: labels for the phase's pods (Kueue's kueue.x-k8s.io/queue-name, a cost centre).
    pod_labels: dict[str, str] | None = Field(
        default=None,
        max_length=32,
        json_schema_extra=validations(
            cel(
                "self.all(k, !k.startsWith('agentjobs.io/')"
                " && k != 'app.kubernetes.io/managed-by')",
                "podLabels cannot set the operator's own labels (agentjobs.io/*, "
                "app.kubernetes.io/managed-by)",
            )
        ),
    )


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
            cel(
                "has(self.queue) == has(oldSelf.queue)"
                " && (!has(self.queue) || self.queue == oldSelf.queue)",
                "queue cannot be changed once the execution exists: create a new Execution",
                reason="FieldValueForbidden",
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
    # R75: the ExecutionQueue (in the same namespace) whose turn it waits for, and its place
    # there: higher first, then the older.
    queue: SubdomainName | None = None
    priority: int = Field(default=0, ge=-1_000_000, le=1_000_000)


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
