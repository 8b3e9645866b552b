"""R45-R47: a phase's retry policy and the record of each of its attempts.

The spec side is a Kubernetes type (camelCase, unknown fields refused); its
bounds are CEL rules whose messages say what the field means. The status
side lists every agent attempt the phase made, as automations read it back.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from agentjobs.models.contract import ContractModel, FailureClassification, PhaseStatus
from agentjobs.models.kubernetes import KubernetesModel

MAX_RETRIES = 10
DEFAULT_BACKOFF_SECONDS = 10
MAX_BACKOFF_SECONDS = 600


class RetryOn(StrEnum):
    """The ends of an attempt a retry policy may answer with another attempt (R45)."""

    PLATFORM = "platform"  # failed, classified platform, its outcome not blocked
    BLOCKED = "blocked"  # failed, its outcome blocked (a rate limit, a transient fault)
    INTERRUPTED = "interrupted"  # R22a, from outside: a deleted pod, a lost node
    STUCK = "stuck"  # R70: stopped after its idleSeconds without a byte; only when listed


def _bounded(low: int, high: int, message: str) -> Any:
    return WithJsonSchema(
        {
            "type": "integer",
            "x-kubernetes-validations": [
                {"rule": f"self >= {low} && self <= {high}", "message": message}
            ],
        }
    )


Retries = Annotated[
    int,
    Field(ge=0, le=MAX_RETRIES),
    _bounded(
        0,
        MAX_RETRIES,
        f"retry.limit must be from 0 to {MAX_RETRIES}: how many more attempts a phase may make "
        "after its first one fails",
    ),
]
BackoffSeconds = Annotated[
    int,
    Field(ge=0, le=MAX_BACKOFF_SECONDS),
    _bounded(
        0,
        MAX_BACKOFF_SECONDS,
        f"retry.backoffSeconds must be from 0 to {MAX_BACKOFF_SECONDS}: the wait before the "
        "second attempt, doubled for each one after it",
    ),
]


class RetryPolicy(KubernetesModel):
    """When a failed attempt of a phase is followed by another (R45, R46)."""

    limit: Retries = 0
    on: list[RetryOn] = Field(
        default=[RetryOn.PLATFORM, RetryOn.BLOCKED],
        max_length=4,
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    backoff_seconds: BackoffSeconds = DEFAULT_BACKOFF_SECONDS
    even_after_side_effects: bool = False


class TranscriptRef(ContractModel):
    """Where an attempt's agent log is stored, whole, and what its bytes hash to."""

    url: str
    sha256: str
    size: int = Field(ge=0)
    # R58: only the log's first --max-transcript-bytes were stored, and a last line says so.
    truncated: bool = False


class AttemptRecord(ContractModel):
    """One agent attempt as the Phase's ``status.attempts[]`` lists it (R47)."""

    number: int = Field(ge=1)
    status: PhaseStatus
    failure_classification: FailureClassification | None = None
    exit_code: int | None = None
    pod_name: str
    # Why the attempt ended as it did, and whether another follows it (or why not).
    reason: str | None = None
    finished_at: datetime
    transcript: TranscriptRef | None = None  # read back by `agentjobs logs` once the pod is gone
