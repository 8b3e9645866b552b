"""R50: the CloudEvents 1.0 structured JSON body of one end of an Execution or of a phase.

The body is a pure function of the resource's status after its end, so every
retry and every operator replica after a restart sends the same bytes under
the same ``id`` (derived from the Execution's UID and which end it is); only
the signature's timestamp changes per attempt. The envelope is built by the
``cloudevents`` package. Strings and lists of the status are cut
(``STRING_LIMIT``, ``LIST_LIMIT``), so whatever a status holds, the body
stays under about 100 KiB (32 phase names and an outcome of 32 blockers at
the limits).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cloudevents.core.bindings import http as cloudevents_http
from cloudevents.core.formats.json import JSONFormat
from cloudevents.core.v1.event import CloudEvent

from agentjobs.models.contract import TaskOutcome
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import API_VERSION

EXECUTION_FINISHED = "io.agentjobs.execution.finished"
PHASE_FINISHED = "io.agentjobs.phase.finished"
STRING_LIMIT = 1024
LIST_LIMIT = 32
_CUT = "...[cut]"


@dataclass(frozen=True)
class ExecutionRef:
    namespace: str
    name: str
    uid: str


@dataclass(frozen=True)
class Message:
    """One event, ready to sign: ``id`` is also the ``webhook-id`` of every attempt."""

    id: str
    content_type: str
    body: bytes


def execution_event_id(execution: ExecutionRef) -> str:
    return f"{execution.uid}-execution-finished"


def phase_event_id(execution: ExecutionRef, phase: str) -> str:
    return f"{execution.uid}-phase-{phase}-finished"


def _bounded(value: Any) -> Any:
    if isinstance(value, str) and len(value) > STRING_LIMIT:
        return value[: STRING_LIMIT - len(_CUT)] + _CUT
    if isinstance(value, list):
        return [_bounded(item) for item in value[:LIST_LIMIT]]
    if isinstance(value, dict):
        return {key: _bounded(item) for key, item in value.items()}
    return value


def _repositories(entries: list[RepositoryStatus] | None) -> Any:
    """R66 for the automation: each repository's branch, commits and push; where its bundle
    is stored is the operator's business."""
    return [
        entry.model_dump(
            mode="json",
            by_alias=True,
            exclude_none=True,
            exclude={"bundle", "bundle_sha256", "bundle_base"},
        )
        for entry in entries or []
    ]


def _outcome(outcome: TaskOutcome | None) -> Any:
    return outcome.model_dump(mode="json", by_alias=True, exclude_none=True) if outcome else None


def _message(
    *, event_type: str, event_id: str, source: str, subject: str, time: datetime, data: Any
) -> Message:
    event = CloudEvent(
        attributes={
            "type": event_type,
            "source": source,
            "id": event_id,
            "time": time,
            "subject": subject,
            "datacontenttype": "application/json",
        },
        data=_bounded(data),
    )
    http = cloudevents_http.to_structured(event, JSONFormat())
    return Message(id=event_id, content_type=http.headers["content-type"], body=http.body)


def execution_finished(
    execution: ExecutionRef, status: ExecutionResourceStatus, *, include_outcome: bool
) -> Message:
    """``io.agentjobs.execution.finished``: R23-R26 and ``phases[]``; ``outcome`` if asked."""
    if status.finished_at is None:
        raise ValueError("an execution's Finished event needs status.finishedAt")
    data: dict[str, Any] = {
        "execution": execution.name,
        "namespace": execution.namespace,
        **status.model_dump(
            mode="json",
            by_alias=True,
            include={
                "status",
                "failure_classification",
                "reported_failure_reason",
                "deliverable_produced",
                "reported_side_effects",
            },
        ),
        "phases": [
            phase.model_dump(mode="json", by_alias=True, exclude_none=True)
            for phase in status.phases
        ],
    }
    if status.repositories:
        data["repositories"] = _repositories(status.repositories)
    if include_outcome:
        data["outcome"] = _outcome(status.task_outcome)
    return _message(
        event_type=EXECUTION_FINISHED,
        event_id=execution_event_id(execution),
        source=f"/apis/{API_VERSION}/namespaces/{execution.namespace}/executions/{execution.name}",
        subject=f"{execution.namespace}/{execution.name}",
        time=status.finished_at,
        data=data,
    )


def phase_finished(
    execution: ExecutionRef,
    *,
    phase: str,
    resource_name: str,
    status: PhaseResourceStatus,
    include_outcome: bool,
) -> Message:
    """``io.agentjobs.phase.finished``: the phase's own verdict; its ``outcome`` if asked."""
    if status.finished_at is None or status.status is None:
        raise ValueError("a PhaseFinished event needs the phase's status and finishedAt")
    data: dict[str, Any] = {
        "execution": execution.name,
        "namespace": execution.namespace,
        "phase": phase,
        # StrEnum values: json writes them as their strings.
        "status": status.status,
        "failureClassification": status.failure_classification,
        "reportedFailureReason": status.reported_failure_reason,
        "reportedSideEffects": status.report.side_effects if status.report else None,
        "deliverableRecovered": bool(status.deliverable_recovered),
    }
    if status.repositories:
        data["repositories"] = _repositories(status.repositories)
    if include_outcome:
        data["outcome"] = _outcome(status.task_outcome)
    return _message(
        event_type=PHASE_FINISHED,
        event_id=phase_event_id(execution, phase),
        source=f"/apis/{API_VERSION}/namespaces/{execution.namespace}/phases/{resource_name}",
        subject=f"{execution.namespace}/{execution.name}/{phase}",
        time=status.finished_at,
        data=data,
    )
