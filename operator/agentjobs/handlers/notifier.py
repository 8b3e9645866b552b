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
from datetime import datetime

from agentjobs.adapters import paths, webhook_sender
from agentjobs.adapters.kube import ApiError, Kube
from agentjobs.logic.execution_plan import ChildPhase
from agentjobs.logic.notifications import delivery, due, message, signing, targets
from agentjobs.models.notifications import Answer, NotificationRecord, NotSent
from agentjobs.models.resources import ExecutionResourceStatus, ExecutionSpec

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


@dataclass(frozen=True)
class Notifier:
    allowed: tuple[targets.AllowPattern, ...]
    read_secret: SecretReader
    send: Sender = webhook_sender.send
    timeout_seconds: float = webhook_sender.TIMEOUT_SECONDS

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
        records = due.notifications(spec, status, ends, execution=execution, allowed=self.allowed)
        limit = asyncio.Semaphore(CONCURRENT_ATTEMPTS)

        async def attempt(record: NotificationRecord) -> NotificationRecord:
            async with limit:
                answer = await self._attempt(record, spec, status, ends, execution, now)
            return delivery.after_attempt(record, answer, now=now)

        for updated in await asyncio.gather(*map(attempt, due.ready(records, now=now))):
            records = due.replaced(records, updated)
        return records

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
        try:
            # Checked again at every attempt: the allow-list may have changed since.
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
            forbidden=targets.forbidden_host,
            timeout=self.timeout_seconds,
        )
