"""A Phase's spec from its Execution, and its status as the run goes on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from agentjobs.contract import retry
from agentjobs.contract.limits import guard
from agentjobs.contract.outcome import phase
from agentjobs.contract.outcome.status_budget import ARTIFACTS_LISTED
from agentjobs.contract.reading import report_body
from agentjobs.contract.repositories import checkout, push
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.contract.text import agent_text, usage
from agentjobs.kube import conditions, naming
from agentjobs.kube.pods import Owner
from agentjobs.models.contract import Artifact, PhaseStatus, Report, SystemFailure, Usage
from agentjobs.models.kubernetes import EnvVar
from agentjobs.models.limits import ExecutionBudget, ExecutionLimits
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import (
    ArtifactStatus,
    LogProgress,
    PhaseResourceStatus,
    RunCheckpoint,
)
from agentjobs.models.resources import API_VERSION, ExecutionSpec, PhaseSpec
from agentjobs.models.retry import AttemptRecord
from agentjobs.models.storage import HandoffRef


class Verdict(Protocol):
    """What a phase's status takes of its reader's verdict (the agent's, or one restored)."""

    @property
    def report(self) -> Report: ...

    @property
    def usage(self) -> Usage | None: ...


TERMINAL = frozenset(
    {PhaseStatus.COMPLETED, PhaseStatus.FAILED, PhaseStatus.CANCELLED, PhaseStatus.INTERRUPTED}
)


def _merge_env(defaults: list[EnvVar] | None, own: list[EnvVar] | None) -> list[EnvVar] | None:
    if defaults is None and own is None:
        return None
    merged = {variable.name: variable for variable in defaults or []}
    merged.update({variable.name: variable for variable in own or []})
    return list(merged.values())


def phase_spec(
    execution: ExecutionSpec,
    *,
    execution_name: str,
    index: int,
    inputs: HandoffRef | None = None,
    repositories_before: Sequence[Sequence[RepositoryStatus]] = (),
    budget: ExecutionBudget | None = None,
) -> PhaseSpec:
    """Phase ``index`` of ``execution`` with ``spec.defaults`` applied.

    A phase's own setting wins over the default; ``env`` is merged by name
    and ``envFrom`` keeps the defaults' sources first, as a container's
    later entries win in Kubernetes. An ``outcome`` is taken whole, and its
    grader runs the phase's image unless it names its own (R37).
    """
    template = execution.phases[index]
    defaults = execution.defaults
    fields = template.model_dump(exclude_none=True, exclude={"env", "env_from", "repositories"})
    if defaults is not None:
        for key, value in defaults.model_dump(exclude_none=True).items():
            if key not in ("env", "env_from"):
                fields.setdefault(key, value)
    grader = fields.get("outcome", {}).get("grader")
    if grader is not None and "image" in fields:
        grader.setdefault("image", fields["image"])
    env_from = [*(defaults.env_from or [] if defaults else []), *(template.env_from or [])]
    return PhaseSpec.model_validate(
        {
            **fields,
            "execution_name": execution_name,
            "index": index,
            "env": _merge_env(defaults.env if defaults else None, template.env),
            "env_from": env_from or None,
            "artifacts": execution.artifacts,
            "inputs": inputs,
            "budget": budget,
            "repositories": checkout.checkouts(
                execution.repositories,
                template.repositories,
                execution_name=execution_name,
                earlier=repositories_before,
            )
            or None,
        }
    )


def phase_manifest(
    execution: ExecutionSpec,
    *,
    namespace: str,
    execution_name: str,
    execution_uid: str,
    index: int,
    inputs: HandoffRef | None,
    repositories_before: Sequence[Sequence[RepositoryStatus]] = (),
    budget: ExecutionBudget | None = None,
) -> dict[str, Any]:
    """The Phase at ``index`` of an Execution, owned by it, named as only it can be."""
    phase = phase_spec(
        execution,
        execution_name=execution_name,
        index=index,
        inputs=inputs,
        repositories_before=repositories_before,
        budget=budget,
    )
    owner = Owner(API_VERSION, "Execution", execution_name, execution_uid)
    return {
        "apiVersion": API_VERSION,
        "kind": "Phase",
        "metadata": {
            "name": naming.phase_resource(execution_name, index, phase.name),
            "namespace": namespace,
            "labels": {
                **naming.MANAGED_BY,
                naming.LABEL_EXECUTION: naming.label_value(execution_name),
            },
            "ownerReferences": [owner.reference()],
        },
        "spec": phase.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def is_terminal(status: PhaseResourceStatus) -> bool:
    return status.status in TERMINAL


def running(
    previous: PhaseResourceStatus,
    *,
    pod_name: str,
    attempt: int,
    message: str,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """A phase whose pod exists and whose agent has not finished."""
    return previous.model_copy(
        update={
            "status": PhaseStatus.RUNNING,
            "pod_name": pod_name,
            "attempt": attempt,
            "started_at": previous.started_at or now,
            "observed_generation": generation,
            "conditions": conditions.conditions_for(
                PhaseStatus.RUNNING.value,
                message=message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def next_attempt(
    previous: PhaseResourceStatus,
    *,
    attempt: int,
    message: str,
    generation: int | None,
    now: datetime,
    **changes: object,
) -> PhaseResourceStatus:
    """The phase still running, attempt ``attempt`` next: the last attempt's pod, run record
    and log progress cleared, so a restarted operator starts the next one (a revision, R42, or
    a retry, R45) and never judges the last one twice; ``changes`` are the caller's own."""
    return previous.model_copy(
        update={
            **changes,
            "attempt": attempt,
            "pod_name": None,
            "run": None,
            "log": None,
            "observed_generation": generation,
            "conditions": conditions.conditions_for(
                PhaseStatus.RUNNING.value,
                message=message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def with_log_progress(
    status: PhaseResourceStatus, *, bytes_read: int, sha256: str
) -> PhaseResourceStatus:
    """The log's progress checkpointed (R14): it never goes back, so a restarted operator
    never trusts a byte it has not proven."""
    known = status.log
    progress = LogProgress(
        bytes_read=bytes_read, sha256=sha256, stopped_by=known.stopped_by if known else None
    )
    if known is not None and known.bytes_read >= progress.bytes_read:
        progress = progress.model_copy(
            update={"bytes_read": known.bytes_read, "sha256": known.sha256}
        )
    return status.model_copy(update={"log": progress})


EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def with_stop(status: PhaseResourceStatus, failure: SystemFailure) -> PhaseResourceStatus:
    """R70: the agent's stop asked for, recorded before it is asked of the pod, so a
    restarted operator asks again and the run ends as this failure."""
    known = status.log or LogProgress(bytes_read=0, sha256=EMPTY_SHA256)
    if known.stopped_by is not None:
        return status
    return status.model_copy(update={"log": known.model_copy(update={"stopped_by": failure})})


def with_run(status: PhaseResourceStatus, record: RunCheckpoint) -> PhaseResourceStatus:
    """The attempt's run checkpointed once its log is judged, before its pod is let go."""
    return status.model_copy(update={"run": record})


def not_retried(concluded: PhaseResourceStatus, record: AttemptRecord) -> PhaseResourceStatus:
    """An attempt that is not retried: its end stands, recorded among the attempts (R45)."""
    return concluded.model_copy(update={"attempts": retry.with_attempt(concluded.attempts, record)})


def retrying(
    before: PhaseResourceStatus,
    concluded: PhaseResourceStatus,
    *,
    record: AttemptRecord,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """The phase after a retried attempt: as it stood before the attempt (nothing of the
    attempt links to the execution, R47), its usage added, the next attempt due; where the
    attempt left each repository is kept, for the next one to start there (R63)."""
    return next_attempt(
        before,
        attempt=record.number + 1,
        message=f"attempt {record.number} ended {record.reason}",
        generation=generation,
        now=now,
        attempts=retry.with_attempt(before.attempts, record),
        usage=usage.add(before.usage, concluded.usage),
    ).model_copy(update={"repositories": concluded.repositories or before.repositories})


def artifact_statuses(
    artifacts: Sequence[Artifact], stored: Mapping[str, tuple[str, str]]
) -> list[ArtifactStatus]:
    """The status entries of a phase's first artifacts (at most ARTIFACTS_LISTED, in path
    order), with where each is stored (url, sha256)."""
    statuses = []
    for artifact in sorted(artifacts, key=lambda item: item.path)[:ARTIFACTS_LISTED]:
        url, sha256 = stored.get(artifact.path, (None, None))
        statuses.append(
            ArtifactStatus(
                path=artifact.path,
                title=artifact.title,
                size=artifact.size,
                sha256=sha256,
                url=url,
                recovered=artifact.recovered,
                kept_as=artifact.kept_as,
            )
        )
    return statuses


def finished(
    previous: PhaseResourceStatus,
    *,
    verdict: Verdict,
    run: RunFacts,
    result: phase.PhaseResult,
    stored: Mapping[str, tuple[str, str]],
    generation: int | None,
    now: datetime,
    handoff: HandoffRef | None = None,
    limits: ExecutionLimits | None = None,
) -> PhaseResourceStatus:
    """A phase resolved by the contract (R14-R36); ``handoff`` names every artifact;
    ``limits`` are shown with how much of each the attempt used (R70)."""
    report = verdict.report
    plan = result.artifacts
    message = result.error or result.task_outcome.summary
    return previous.model_copy(
        update={
            "status": result.status,
            "report": report.model_copy(
                update={"comments": report_body.comments_for_status(report.comments)}
            ),
            "exit_code": run.exit_code,
            "stream_intact": run.stream_intact,
            "failure_classification": result.failure_classification,
            "reported_failure_reason": result.reported_failure_reason,
            "task_outcome": result.task_outcome,
            "usage": verdict.usage,
            "limits": guard.uses(limits, guard.Spent.of(verdict.usage)),
            "artifacts": artifact_statuses(plan.artifacts if plan else [], stored),
            "artifact_count": len(plan.artifacts) if plan else None,
            "handoff": handoff,
            "skipped_count": len(plan.skipped) if plan else None,
            "artifact_warnings": [
                agent_text.cut(warning, agent_text.SHORT_TEXT_BYTES)
                for warning in (plan.warnings if plan else [])
            ][:ARTIFACTS_LISTED],
            "deliverable_recovered": plan.deliverable_recovered if plan else None,
            "error": result.error,
            # The record stays; the last message was kept only in case recovery needed it.
            "run": previous.run.model_copy(update={"last_message": None}) if previous.run else None,
            "started_at": previous.started_at or now,
            "finished_at": now,
            "observed_generation": generation,
            "conditions": conditions.conditions_for(
                result.status.value,
                message=message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def with_repositories(
    status: PhaseResourceStatus,
    entries: Sequence[RepositoryStatus],
    unpushed: Sequence[push.UnpushedWork],
) -> PhaseResourceStatus:
    """A finished phase's status with what it did with each repository (R63); a push that
    did not land leaves the phase's status as it is and is told in its outcome (R64)."""
    outcome = status.task_outcome
    if outcome is not None:
        outcome = push.after_pushes(outcome, unpushed)
    return status.model_copy(update={"repositories": list(entries), "task_outcome": outcome})
