"""One phase, end to end: report and run facts in, status, artifacts and outcome out.

This is where R16-R22a (resolution), R28-R34 (the artifact rule) and R36 (the
outcome) meet; the operator and the CLI both call :func:`resolve_phase`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agentjobs.contract.artifacts import artifact_rule
from agentjobs.contract.outcome import outcome
from agentjobs.contract.resolution import resolution
from agentjobs.models.contract import (
    FailureClassification,
    FailureKind,
    FailureReason,
    PhaseStatus,
    Report,
    SystemFailure,
    TaskOutcome,
)
from agentjobs.models.output import OutputEntry


@dataclass(frozen=True)
class PhaseResult:
    """Everything a phase's status reports once the phase has ended."""

    status: PhaseStatus
    failure_classification: FailureClassification | None
    reported_failure_reason: FailureReason | None
    task_outcome: TaskOutcome
    artifacts: artifact_rule.ArtifactPlan | None
    error: str | None


INCOMPLETE_ARTIFACTS = (
    "the harvester did not finish its last sync, so the artifacts in storage may be "
    "incomplete; run the phase again"
)
# The harvester's reason comes from inside the agent's pod: kept short and printable.
MAX_HARVEST_FAILURE_CHARS = 300


def _given_up(reason: str) -> str:
    shown = "".join(c if c.isprintable() else "?" for c in reason[:MAX_HARVEST_FAILURE_CHARS])
    return (
        f"the harvester gave its last sync up ({shown}), so the artifacts in storage are incomplete"
    )


def resolve_phase(
    *,
    report: Report,
    run: resolution.RunFacts,
    output: Sequence[OutputEntry] | None,
    recovery: artifact_rule.RecoveryContext,
    now: datetime,
    retried: bool = False,
    artifacts_complete: bool = True,
    harvest_failure: str | None = None,
) -> PhaseResult:
    """Resolve a finished phase.

    ``output`` is the listing of its output directory, or None when the
    artifact rule is taken as met (the CLI without ``--artifacts``).
    ``retried`` marks an attempt that will be retried because its terminal
    event was lost: it keeps nothing (R34). ``artifacts_complete`` is false
    when the harvester never wrote its final manifest (it crashed or was
    killed): what storage holds may be short of what the agent wrote, so the
    phase cannot complete on it; it fails, keeping what was stored.
    ``harvest_failure`` is the reason the harvester recorded when it gave its
    last sync up (a refusal for good): the error says it instead.
    """
    resolved = resolution.resolve_run(report, run, artifact_rule_holds=True)
    plan: artifact_rule.ArtifactPlan | None = None
    error: str | None = None
    if resolved.status is PhaseStatus.COMPLETED and not artifacts_complete:
        error = INCOMPLETE_ARTIFACTS if harvest_failure is None else _given_up(harvest_failure)
        failed = resolution.resolve_run(report, run, artifact_rule_holds=False)
        cause = SystemFailure(kind=FailureKind.TRANSIENT, code="ArtifactsIncomplete", message=error)
        resolved = resolution.RunResolution(
            failed.status, failed.failure_classification, failed.reported_failure_reason, cause
        )
    if output is not None and resolved.status is PhaseStatus.COMPLETED:
        plan = artifact_rule.plan_artifacts(
            output, recovery, artifact_rule.ArtifactBranch.COMPLETING
        )
        if plan.error is not None:  # R33
            error = plan.error
            failed = resolution.resolve_run(report, run, artifact_rule_holds=False)
            cause = SystemFailure(
                kind=FailureKind.NO_USABLE_OUTPUT, code="no_usable_output", message=error
            )
            resolved = resolution.RunResolution(
                failed.status, failed.failure_classification, failed.reported_failure_reason, cause
            )
            plan = None
    if output is not None and plan is None:
        end = artifact_rule.branch_for(resolved.status, retried=retried)
        kept = artifact_rule.plan_artifacts(output, recovery, end)
        plan = artifact_rule.ArtifactPlan(
            kept.artifacts, kept.skipped, kept.deliverable_recovered, error, kept.warnings
        )
    task_outcome = outcome.for_phase(
        status=resolved.status, report=report, cause=resolved.cause, now=now
    )
    return PhaseResult(
        status=resolved.status,
        failure_classification=resolved.failure_classification,
        reported_failure_reason=resolved.reported_failure_reason,
        task_outcome=task_outcome,
        artifacts=plan,
        error=error,
    )
