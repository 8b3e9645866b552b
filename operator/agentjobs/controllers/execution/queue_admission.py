"""R75: queue admission in this process: one decision at a time per queue, on what the
watches show, with the admissions the watches do not show yet.

An Execution is admitted when its first own Phase is created, so the API holds every
admission: a restarted operator (or the next leader, whose watches start with a fresh
listing) counts them all. Within a process a decision can come before the watch shows the
Phase an earlier one created; those are remembered here until it does, so no decision ever
counts fewer running than there are.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from agentjobs.adapters import metrics
from agentjobs.adapters.kube import JsonObject
from agentjobs.contract.scheduling import queue
from agentjobs.models.resource_status import ExecutionResourceStatus
from agentjobs.models.scheduling import ExecutionQueueSpec
from agentjobs.runtime import events
from agentjobs.runtime.observed import Observed

QueueKey = tuple[str, str]  # namespace, queue


def _time(value: Any) -> datetime:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


class QueueAdmission:
    def __init__(self, observed: Observed) -> None:
        self._observed = observed
        self._locks: defaultdict[QueueKey, asyncio.Lock] = defaultdict(asyncio.Lock)
        # Admitted here, first Phase not yet in the watch: name -> when.
        self._unseen: defaultdict[QueueKey, dict[str, datetime]] = defaultdict(dict)

    @contextlib.asynccontextmanager
    async def deciding(self, namespace: str, name: str) -> AsyncIterator[None]:
        """Hold the queue while one of its Executions is decided and its Phase created."""
        async with self._locks[namespace, name]:
            yield

    def limits(self, namespace: str, name: str) -> queue.Limits | None:
        body = self._observed.execution_queue(namespace, name)
        if body is None:
            return None
        spec = ExecutionQueueSpec.model_validate(body["spec"])
        return queue.Limits(spec.max_running, spec.max_starts_per_minute)

    def admitted_at(self, execution: JsonObject) -> datetime | None:
        """When the Execution's first own Phase was created (or this process admitted it)."""
        meta = execution["metadata"]
        phases = [
            p
            for p in self._observed.phases_of(meta["uid"])
            if p["metadata"]["namespace"] == meta["namespace"]
        ]
        key = (meta["namespace"], execution["spec"].get("queue") or "")
        if phases:
            self._unseen[key].pop(meta["name"], None)
            return min(_time(p["metadata"]["creationTimestamp"]) for p in phases)
        return self._unseen[key].get(meta["name"])

    def members(self, namespace: str, name: str) -> list[queue.Member]:
        found = []
        present = set()
        for execution in self._observed.executions_in_queue(namespace, name):
            meta, status = execution["metadata"], execution.get("status") or {}
            present.add(meta["name"])
            found.append(
                queue.Member(
                    name=meta["name"],
                    priority=int(execution["spec"].get("priority") or 0),
                    created=_time(meta["creationTimestamp"]),
                    admitted_at=self.admitted_at(execution),
                    finished=bool(status.get("finishedAt")),
                )
            )
        unseen = self._unseen[namespace, name]
        for gone in set(unseen) - present:  # deleted before its Phase was seen
            del unseen[gone]
        return found

    def turn(self, namespace: str, name: str, queue_name: str, *, now: datetime) -> queue.Decision:
        """Whether Execution ``name`` may create its first Phase now (within ``deciding``)."""
        members = self.members(namespace, queue_name)
        limits = self.limits(namespace, queue_name)
        decision = queue.decide(name, queue_name, members, limits, now=now)
        # Series only for queues that exist: any Execution may name any queue.
        if limits is not None:
            waiting = len(queue.waiting(members)) - (1 if decision.admit else 0)
            metrics.queue_waiting.labels(namespace, queue_name).set(waiting)
        return decision

    def admitted(self, execution: JsonObject, queue_name: str, *, now: datetime) -> None:
        """Its first Phase was created: remembered until the watch shows it, and told."""
        meta = execution["metadata"]
        self._unseen[meta["namespace"], queue_name][meta["name"]] = now
        waited = (now - _time(meta["creationTimestamp"])).total_seconds()
        metrics.queue_wait.labels(meta["namespace"], queue_name).observe(waited)
        events.post(execution, reason="Admitted", message=f"queue {queue_name} let it start")

    def status(
        self,
        execution: JsonObject,
        queue_name: str,
        status: ExecutionResourceStatus,
        previous: ExecutionResourceStatus,
        turn: queue.Decision | None,
        *,
        now: datetime,
    ) -> ExecutionResourceStatus:
        """The Execution's status with its place in the queue, or when it left it."""
        generation = execution["metadata"].get("generation")
        if turn is not None and not turn.admit:
            return queue.queued_status(
                status, previous, queue=queue_name, decision=turn, generation=generation, now=now
            )
        return queue.left_status(
            status,
            queue=queue_name,
            admitted_at=self.admitted_at(execution),
            generation=generation,
            now=now,
        )
