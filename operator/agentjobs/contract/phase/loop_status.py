"""R41-R43: the Phase's status at each step of its outcome loop, so each is one write.

- ``grading``: an attempt concluded ``completed`` and its evaluation starts. The
  phase stays running with that attempt's artifacts, report and hand-off (the
  grader fetches that hand-off) and the evaluation recorded as started.
- ``revising``: the evaluation asked for a revision. Its end and the next
  attempt's number are written together, with the attempt's run record and log
  progress cleared, so that a restarted operator starts that attempt (pod
  ``-a<n+1>``) and never grades the last one twice. The hand-off stays: it is
  the revised attempt's ``previous/``.
- ``ended``: the evaluation ended the loop (R41); the phase's final status, its
  artifacts the last attempt's, relabelled as kept when the phase did not
  complete.

Usage adds up as the loop goes (R43): each write adds what its step spent,
and each step is written once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agentjobs.contract.artifacts.artifact_rule import artifact_title
from agentjobs.contract.grading.phase_end import LoopEnd
from agentjobs.contract.phase import phase_status
from agentjobs.contract.text import usage
from agentjobs.kube import conditions
from agentjobs.models.contract import KeptAs, PhaseStatus, Usage
from agentjobs.models.outcomes import PhaseOutcome
from agentjobs.models.resource_status import ArtifactStatus, PhaseResourceStatus


def with_earlier_usage(
    concluded: PhaseResourceStatus, earlier: Usage | None
) -> PhaseResourceStatus:
    """An attempt's concluded status, its usage added to what earlier steps spent."""
    return concluded.model_copy(update={"usage": usage.add(earlier, concluded.usage)})


def grading(
    concluded: PhaseResourceStatus,
    *,
    recorded: PhaseOutcome,
    message: str,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """The concluded attempt kept, the phase running while its grader runs."""
    return concluded.model_copy(
        update={
            "status": PhaseStatus.RUNNING,
            "outcome": recorded,
            "finished_at": None,
            "error": None,
            "observed_generation": generation,
            "conditions": conditions.conditions_for(
                PhaseStatus.RUNNING.value,
                message=message,
                previous=concluded.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def revising(
    status: PhaseResourceStatus,
    *,
    recorded: PhaseOutcome,
    spent: Usage | None,
    next_attempt: int,
    message: str,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """The evaluation ended ``needs_revision``: attempt ``next_attempt`` is next (R42)."""
    return phase_status.next_attempt(
        status,
        attempt=next_attempt,
        message=message,
        generation=generation,
        now=now,
        outcome=recorded,
        usage=usage.add(status.usage, spent),
    )


def ended(
    status: PhaseResourceStatus,
    end: LoopEnd,
    *,
    recorded: PhaseOutcome,
    spent: Usage | None,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """R41: the phase as its loop ended it; its artifacts are its last attempt's."""
    error = end.cause.message if end.cause is not None else None
    message = error or end.task_outcome.summary
    artifacts = kept(status.artifacts, end.kept_as) if end.kept_as else status.artifacts
    return status.model_copy(
        update={
            "status": end.status,
            "failure_classification": end.failure_classification,
            "reported_failure_reason": None,
            "task_outcome": end.task_outcome,
            "outcome": recorded,
            "usage": usage.add(status.usage, spent),
            "artifacts": artifacts,
            "error": error,
            "run": status.run.model_copy(update={"last_message": None}) if status.run else None,
            "finished_at": now,
            "observed_generation": generation,
            "conditions": conditions.conditions_for(
                end.status.value,
                message=message,
                previous=status.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def kept(artifacts: Sequence[ArtifactStatus], kept_as: KeptAs) -> list[ArtifactStatus]:
    """R34, R41: the last attempt's artifacts, titled as kept from a failed phase or partial."""
    return [
        artifact.model_copy(
            update={
                "kept_as": kept_as,
                "title": artifact_title(
                    artifact.path, recovered=artifact.recovered, kept_as=kept_as
                ),
            }
        )
        for artifact in artifacts
    ]
