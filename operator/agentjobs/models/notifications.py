"""R49, R51: an Execution's completion webhooks (spec ``notify[]``) and their delivery record.

The spec side is a Kubernetes type whose URL rules are CEL, each with a
message that says how to fix the mistake; which URLs the operator actually
calls is decided later by its own allow-list (``--webhook-allow``), so the
schema admits both http and https. The status side is what survives an
operator restart: every due notification with its state and its next try.
The answers of one delivery attempt are plain values shared by the sender
(an adapter) and the delivery rules (the contract), which may not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from agentjobs.models.contract import ContractModel
from agentjobs.models.kubernetes import (
    MAX_URL_LENGTH,
    KubernetesModel,
    SubdomainName,
    cel_rules,
    http_url_schema,
)

MAX_TARGETS = 4
NotifyEvent = Literal["Finished", "PhaseFinished"]
NotificationState = Literal["Pending", "Delivered", "Failed"]


WebhookUrl = Annotated[
    str,
    Field(min_length=1, max_length=MAX_URL_LENGTH),
    http_url_schema(
        "--webhook-allow",
        (
            "self.matches('^https?://[^/?#@]+([/?].*)?$')",
            "url must name a host after the scheme, and no user or password: the "
            "signature made with secretRef is what authenticates the operator",
        ),
        ("!self.contains('#')", "url must not have a #fragment: it is never sent"),
    ),
]


class SigningKeyRef(KubernetesModel):
    """The key of a Secret in the Execution's namespace that holds the signing secret."""

    name: SubdomainName
    key: str = Field(min_length=1, max_length=253)


class NotifyTarget(KubernetesModel):
    """R49: one receiver of the Execution's completion events."""

    url: WebhookUrl
    secret_ref: SigningKeyRef
    events: list[NotifyEvent] = Field(
        default=["Finished"],
        min_length=1,
        max_length=2,
        json_schema_extra={
            "x-kubernetes-list-type": "set",
            **cel_rules(
                ("size(self) >= 1", "events must name at least one of Finished, PhaseFinished")
            ),
        },
    )
    # Off by default: older receivers refuse fields they do not know (seed 000).
    include_outcome: bool = False


@dataclass(frozen=True)
class HttpAnswer:
    """The receiver answered with this status (its body is never kept, R59)."""

    status: int
    retry_after: str | None = None


@dataclass(frozen=True)
class NoAnswer:
    """No HTTP answer: a timeout, a refused or reset connection, a TLS or DNS failure."""

    error: str


@dataclass(frozen=True)
class NotSent:
    """The operator did not call the receiver (e.g. its name resolved to a forbidden address)."""

    error: str
    retry: bool


Answer = HttpAnswer | NoAnswer | NotSent


class NotificationRecord(ContractModel):
    """R51: one notification to one target, as ``status.notifications[]`` keeps it."""

    notify: int = Field(ge=0)  # the index in spec.notify, which cannot change
    # The host (and port, when the URL names one) only: a URL's path and query often
    # carry the receiver's token.
    target: str
    event: NotifyEvent
    phase: str | None = None
    id: str  # the CloudEvent id, also every attempt's webhook-id
    state: NotificationState
    attempts: int = Field(default=0, ge=0)
    last_error: str | None = None
    first_attempt_at: datetime | None = None
    next_attempt_at: datetime | None = None
    delivered_at: datetime | None = None
