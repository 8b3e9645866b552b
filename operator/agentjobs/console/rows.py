"""The Executions list: one row per Execution, its columns as ``kubectl get executions``
prints them, plus what the console filters on. Pure: an Execution's JSON in, a row out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from agentjobs.models.contract import ExecutionStatus

JsonObject = dict[str, Any]
ENDED = frozenset(
    status.value for status in ExecutionStatus if status is not ExecutionStatus.RUNNING
)


class Row(NamedTuple):
    namespace: str
    name: str
    uid: str
    status: str  # "" before the operator's first status write
    current_phase: str
    classification: str
    outcome: str
    deliverable: bool | None
    branch: str
    cost: str
    created: str  # RFC 3339, as the API gave it: it sorts as a time
    labels: dict[str, str]

    @property
    def key(self) -> str:
        """The row's id in the page: namespace and name cannot hold a ``/`` (R53)."""
        return f"{self.namespace}/{self.name}"

    @property
    def ended(self) -> bool:
        return self.status in ENDED


@dataclass(frozen=True)
class Filters:
    namespace: str = ""
    status: str = ""
    classification: str = ""
    label: str = ""  # a label selector, passed to the API as it is

    def keeps(self, row: Row) -> bool:
        return (not self.status or row.status == self.status) and (
            not self.classification or row.classification == self.classification
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def row(execution: JsonObject) -> Row:
    metadata = execution.get("metadata") or {}
    status = execution.get("status") or {}
    repositories = status.get("repositories") or [{}]
    cost = (status.get("usage") or {}).get("costUsd")
    deliverable = status.get("deliverableProduced")
    return Row(
        namespace=_text(metadata.get("namespace")),
        name=_text(metadata.get("name")),
        uid=_text(metadata.get("uid")),
        status=_text(status.get("status")),
        current_phase=_text(status.get("currentPhase")),
        classification=_text(status.get("failureClassification")),
        outcome=_text(status.get("outcome")),
        deliverable=deliverable if isinstance(deliverable, bool) else None,
        branch=_text((repositories[0] if isinstance(repositories[0], dict) else {}).get("branch")),
        cost=f"{cost:.4f}" if isinstance(cost, int | float) and not isinstance(cost, bool) else "",
        created=_text(metadata.get("creationTimestamp")),
        labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()},
    )


def newest_first(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (r.created, r.namespace, r.name), reverse=True)
