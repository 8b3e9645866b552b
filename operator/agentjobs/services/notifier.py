"""R49-R51: one reconcile's worth of completion webhooks for an Execution.

``Notifier.settle`` takes what the reconcile already read (spec, status, the
Execution's own Phases), records every notification now owed, makes one
attempt at each that is due and returns the new ``status.notifications[]``.
The caller writes that into the status and reconciles again at
``due.next_attempt(records)``. All state lives in those records, so an
operator that restarts goes on where the status says, with the same event
ids: delivery is at least once (a crash after a receiver's 2xx and before
the status patch sends that event again, under the same ``webhook-id``, for
the receiver to drop).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from agentjobs.adapters import metrics, paths, webhook_sender
from agentjobs.adapters.kube import ApiError, Kube
from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.notifications import delivery, due, message, signing, targets
from agentjobs.models.notifications import Answer, NotificationRecord, NotSent
from agentjobs.models.resource_status import ExecutionResourceStatus
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime.config import OperatorConfig

# Attempts made at once in one reconcile: a slow receiver must not hold up the others.
CONCURRENT_ATTEMPTS = 8


class SecretUnavailable(Exception):
    """The signing secret could not be had; ``retry`` says whether it may appear later."""

    def __init__(self, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


SecretReader = Callable[[str, str, str], Awaitable[bytes]]  # namespace, name, key -> value
Sender = Callable[..., Awaitable[Answer]]


def kube_secret_reader(kube: Kube) -> SecretReader:
    """Reads a key of a Secret through the API (the operator needs ``get`` on Secrets)."""

    async def read(namespace: str, name: str, key: str) -> bytes:
        try:
            body = await kube.get(paths.secret(namespace, name))
        except ApiError as error:
            if error.forbidden:
                raise SecretUnavailable(
                    f"the operator may not read Secret {name} in {namespace}", retry=False
                ) from None
            raise SecretUnavailable(
                f"Secret {name} could not be read: HTTP {error.status}", retry=True
            ) from None
        if body is None:
            raise SecretUnavailable(f"Secret {name} does not exist", retry=True)
        encoded = (body.get("data") or {}).get(key)
        if not isinstance(encoded, str):
            raise SecretUnavailable(f"Secret {name} has no key {key}", retry=True)
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise SecretUnavailable(
                f"Secret {name}'s key {key} is not base64", retry=False
            ) from None

    return read


def from_config(kube: Kube, config: OperatorConfig) -> Notifier:
    """The operator's one Notifier, from its ``--webhook-*`` flags."""
    return Notifier(
        allowed=targets.parse_patterns(config.webhook_allow),
        read_secret=kube_secret_reader(kube),
        secret_name=config.webhook_secret_name,
        first_backoff=timedelta(seconds=config.webhook_backoff_seconds),
    )


@dataclass(frozen=True)
class Notifier:
    """``secret_name`` is the one Secret name it reads signing keys from (None: webhooks off);
    ``first_backoff`` the wait after a first failed attempt, doubled after each next one."""

    allowed: tuple[targets.AllowPattern, ...]
    read_secret: SecretReader
    secret_name: str | None
    send: Sender = webhook_sender.send
    timeout_seconds: float = webhook_sender.TIMEOUT_SECONDS
    first_backoff: timedelta = delivery.FIRST_DELAY

    def owed(
        self,
        *,
        execution: message.ExecutionRef,
        spec: ExecutionSpec,
        status: ExecutionResourceStatus,
        children: Sequence[ChildPhase],
    ) -> list[NotificationRecord]:
        """``status.notifications[]`` with every notification now owed, none attempted."""
        return due.notifications(
            spec,
            status,
            due.phase_ends(children),
            execution=execution,
            allowed=self.allowed,
            secret_name=self.secret_name,
        )

    async def settle(
        self,
        *,
        execution: message.ExecutionRef,
        spec: ExecutionSpec,
        status: ExecutionResourceStatus,
        children: Sequence[ChildPhase],
        now: datetime,
    ) -> list[NotificationRecord]:
        """``status.notifications[]`` after one attempt at each notification due at ``now``."""
        ends = due.phase_ends(children)
        records = self.owed(execution=execution, spec=spec, status=status, children=children)
        limit = asyncio.Semaphore(CONCURRENT_ATTEMPTS)

        async def attempt(record: NotificationRecord) -> NotificationRecord:
            async with limit:
                answer = await self._attempt(record, spec, status, ends, execution, now)
            after = delivery.after_attempt(record, answer, now=now, first_delay=self.first_backoff)
            outcome = {"Delivered": "delivered", "Failed": "failed"}.get(after.state, "retry")
            metrics.webhook_deliveries.labels(outcome).inc()
            return after

        for updated in await asyncio.gather(*map(attempt, due.ready(records, now=now))):
            records = due.replaced(records, updated)
        return records

    async def recorded(
        self,
        *,
        execution: message.ExecutionRef,
        spec: ExecutionSpec,
        status: ExecutionResourceStatus,
        previous: ExecutionResourceStatus,
        children: Sequence[ChildPhase],
        now: datetime,
    ) -> ExecutionResourceStatus:
        """``status`` with its notifications (R51): owed ones recorded with the verdict, then
        attempted at the next reconcile, whose attempts are bounded by the sender's timeout."""
        if due.attempt_now(status, previous):
            records = await self.settle(
                execution=execution, spec=spec, status=status, children=children, now=now
            )
        else:
            records = self.owed(execution=execution, spec=spec, status=status, children=children)
        return status.model_copy(update={"notifications": records})

    async def _attempt(
        self,
        record: NotificationRecord,
        spec: ExecutionSpec,
        status: ExecutionResourceStatus,
        ends: Sequence[due.PhaseEnd],
        execution: message.ExecutionRef,
        now: datetime,
    ) -> Answer:
        notify = spec.notify[record.notify]
        # Checked again at every attempt: the operator's settings may have changed since.
        refusal = signing.secret_refusal(notify.secret_ref.name, self.secret_name)
        if refusal is not None:
            return NotSent(refusal, retry=False)
        try:
            target = targets.check(notify.url, self.allowed)
            event = due.message_for(record, spec, status, ends, execution=execution)
            value = await self.read_secret(
                execution.namespace, notify.secret_ref.name, notify.secret_ref.key
            )
            key = signing.signing_key(value)
        except targets.TargetRefused as refusal:
            return NotSent(str(refusal), retry=False)
        except (LookupError, ValueError) as error:
            return NotSent(str(error), retry=isinstance(error, signing.SigningKeyInvalid))
        except SecretUnavailable as error:
            return NotSent(str(error), retry=error.retry)
        headers = signing.headers(
            key, message_id=event.id, timestamp=int(now.timestamp()), body=event.body
        )
        return await self.send(
            url=target.url,
            authority=target.authority,
            content_type=event.content_type,
            body=event.body,
            headers=headers,
            forbidden=target.forbidden,
            timeout=self.timeout_seconds,
        )
