"""Reconcile an Execution: create its next Phase, cancel, write its status (R23-R27).

Level-triggered: every event of an Execution or of one of its Phases calls
:func:`reconcile`, which reads the current state (as the watches show it, see
:mod:`observed`: no GET or LIST per event) and acts on the pure plan from
:mod:`agentjobs.contract.execution.execution_plan`. Reconciles of one Execution are
serialised in this process; the Phase it creates has a deterministic name,
so a second operator (or a restart) can never create a twin.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agentjobs.adapters import metrics, paths
from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.contract.execution import execution_plan, phase_view, resume, ttl
from agentjobs.contract.notifications import due, message
from agentjobs.contract.outcome import status_budget
from agentjobs.contract.scheduling import queue
from agentjobs.contract.scheduling.queue import Decision
from agentjobs.controllers.execution import phase_creation, retention
from agentjobs.controllers.execution.queue_admission import QueueAdmission
from agentjobs.controllers.execution.resumption import resumption_of
from agentjobs.kube import resource_versions
from agentjobs.kube.status_patch import status_patch
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec, PhaseSpec
from agentjobs.runtime import backoff, errors, events
from agentjobs.runtime.errors import RetryLater, StatusTooLarge, log_retry
from agentjobs.runtime.observed import Observed, without_managed_fields
from agentjobs.runtime.own_creations import OwnCreations
from agentjobs.services.notifier import Notifier
from agentjobs.services.phase_storage import PhaseStorage

logger = logging.getLogger(__name__)
# An Execution starts running with its first Phase, whose own Running Event tells it: a
# second Event saying the same was one request in thirty of a phase's.
UNTOLD_CONDITIONS = frozenset({"Running"})


class ExecutionReconciler:
    def __init__(
        self,
        kube: Kube,
        storage: PhaseStorage | None,
        notifier: Notifier,
        observed: Observed,
        admission: QueueAdmission,
        *,
        default_ttl: int | None = None,
        phase_created: Callable[[JsonObject], None] = lambda _: None,
    ) -> None:
        self._kube = kube
        # Told each Phase this reconciler creates, as the API server returned it.
        self._phase_created = phase_created
        self._default_ttl = default_ttl
        self._observed = observed
        # The answer of this reconciler's last write to each Execution, while the watch has
        # not yet shown that version (see kube/resource_versions).
        self._written: dict[tuple[str, str], JsonObject] = {}
        # The resourceVersion of this reconciler's last write to each Execution, until its
        # event comes back.
        self._echoes: dict[tuple[str, str], str] = {}
        self._storage = storage
        self._notifier = notifier
        self._locks: defaultdict[tuple[str, str], asyncio.Lock] = defaultdict(asyncio.Lock)
        self._waiting: set[tuple[str, str]] = set()  # reconciles waiting for the lock
        self._retries: dict[tuple[str, str], asyncio.Task[None]] = {}
        # R51: one wake-up per Execution, at its earliest due notification.
        self._wakeups: dict[tuple[str, str], tuple[datetime, asyncio.Task[None]]] = {}
        self._admission = admission
        self._nudges: set[asyncio.Task[None]] = set()
        self._created = OwnCreations()  # Phases made, until the watch shows them
        # Each Phase as its Execution last read it, by the Phase's UID.
        self._phase_views: dict[str, JsonObject] = {}

    async def reconcile(self, namespace: str, name: str, *, attempt: int = 0) -> None:
        """Reconcile now; after a failure, try again later with backoff (events may not come).
        While one reconcile of an Execution waits for another to end, a third is not queued
        behind it: the waiting one reads the state only when it starts."""
        key = (namespace, name)
        if key in self._waiting:
            return
        try:
            self._waiting.add(key)
            try:
                await self._locks[key].acquire()
            finally:
                self._waiting.discard(key)
            try:
                await self._reconcile(namespace, name)
            finally:
                self._locks[key].release()
        except StatusTooLarge as error:  # R57: the next event may bring a smaller status
            metrics.reconcile_errors.inc()
            logger.error("execution %s/%s: %s; not retried", namespace, name, error)
        except Exception as error:  # sorted in log_retry; a reconcile must always come again
            if not isinstance(error, RetryLater):  # a wait is no error
                metrics.reconcile_errors.inc()
            delay = backoff.API.delay(attempt)
            log_retry(logger, f"execution {namespace}/{name}", error, delay)
            self._retry_later(namespace, name, attempt, delay)

    def _retry_later(self, namespace: str, name: str, attempt: int, delay: float) -> None:
        if (namespace, name) in self._retries:
            return

        async def retry() -> None:
            await asyncio.sleep(delay)
            del self._retries[namespace, name]
            await self.reconcile(namespace, name, attempt=attempt + 1)

        self._retries[namespace, name] = asyncio.create_task(retry())

    def _wake_at(self, namespace: str, name: str, when: datetime) -> None:
        """Reconcile again at ``when`` (events may not come), unless one is due sooner."""
        key = (namespace, name)
        if key in self._wakeups:
            if self._wakeups[key][0] <= when:
                return
            self._wakeups[key][1].cancel()

        async def wake() -> None:
            await asyncio.sleep(max((when - datetime.now(UTC)).total_seconds(), 0.0))
            del self._wakeups[key]
            await self.reconcile(namespace, name)

        self._wakeups[key] = (when, asyncio.create_task(wake()))

    def stop(self) -> None:
        waiting = [*self._retries.values(), *(task for _, task in self._wakeups.values())]
        for task in [*waiting, *self._nudges]:
            task.cancel()
        self._retries.clear()  # a cancelled retry must not block the next one
        self._wakeups.clear()

    async def _children(
        self, namespace: str, name: str, uid: str
    ) -> list[execution_plan.ChildPhase]:
        """The Phases this Execution owns; a predecessor's of the same name are not."""
        children = []
        for item in self._created.with_unseen(uid, self._observed.phases_of(uid)):
            if item["metadata"]["namespace"] != namespace:
                continue
            spec = PhaseSpec.model_validate(item["spec"])
            children.append(
                execution_plan.ChildPhase(
                    resource_name=item["metadata"]["name"],
                    spec=spec,
                    status=PhaseResourceStatus.model_validate(phase_view.status_view(item)),
                )
            )
        return children

    def _execution(self, namespace: str, name: str) -> JsonObject | None:
        """The Execution: as the watch shows it, or as this reconciler last wrote it when that
        is later; None when the watch no longer shows it (deleted)."""
        key = (namespace, name)
        body = self._observed.execution(namespace, name)
        written = self._written.pop(key, None)
        if body is None:
            return None
        if written is not None and resource_versions.written_is_later(body, written):
            self._written[key] = written
            return written
        return body

    def _wrote(self, body: JsonObject | None, *, settled: bool = False) -> None:
        """Remember a write's answer; with ``settled`` (a reconcile of it would do nothing),
        its event is to be known as only its echo."""
        if body is not None:
            key = (body["metadata"]["namespace"], body["metadata"]["name"])
            self._written[key] = without_managed_fields(body)
            if settled:
                self._echoes[key] = body["metadata"]["resourceVersion"]
            else:
                self._echoes.pop(key, None)

    def phase_deleted(self, uid: str) -> None:
        """The watch showed a Phase's deletion: one made here and never shown is no more."""
        self._created.deleted(uid)
        self._phase_views.pop(uid, None)

    def phase_changed(self, phase: JsonObject) -> bool:
        """True when a Phase's event changes what its Execution reads of it: an event that
        only moved its runner's checkpoints (its log read; with storage, its run's facts too)
        leaves the plan as it was."""
        uid = phase["metadata"]["uid"]
        view = phase_view.execution_view(phase)
        changed = self._phase_views.get(uid) != view
        # The latest kept even when equal: it shares its parts with the watch's copy, where
        # an older one would keep a second copy of them.
        self._phase_views[uid] = view
        return changed

    def watch_shows(self, body: JsonObject) -> None:
        """The watch shows ``body``: a write's answer it has caught up with is read no more
        (kept, every finished Execution's last answer stayed for good: 5,000 held 75 MiB)."""
        key = (body["metadata"]["namespace"], body["metadata"]["name"])
        written = self._written.get(key)
        if written is not None and not resource_versions.written_is_later(body, written):
            del self._written[key]

    def execution_deleted(self, namespace: str, name: str) -> None:
        """The watch showed an Execution's deletion: what was kept for it goes too."""
        key = (namespace, name)
        self._written.pop(key, None)
        self._echoes.pop(key, None)
        lock = self._locks.get(key)
        if lock is not None and not lock.locked():
            del self._locks[key]

    def echoes_own_write(self, namespace: str, name: str, version: str) -> bool:
        """True when an Execution's event shows just what this reconciler's last write made
        (``version`` is that write's): the event changes nothing a reconcile reads, and any
        later change of its Phases brings their own events."""
        if self._echoes.get((namespace, name)) != version:
            return False
        del self._echoes[namespace, name]
        return True

    async def _reconcile(self, namespace: str, name: str) -> None:
        body = self._execution(namespace, name)
        if body is None:
            return
        spec = ExecutionSpec.model_validate(body["spec"])
        kept = await retention.apply(self._kube, self._storage, body, spec)
        self._wrote(kept.written)
        if kept.being_deleted:
            return
        previous = ExecutionResourceStatus.model_validate(body.get("status") or {})
        children = await self._children(namespace, name, body["metadata"]["uid"])
        resumption = None
        if resume.needs_parent(spec, previous):
            resumption = resumption_of(self._observed, namespace, spec)
        now = datetime.now(UTC)
        planned = functools.partial(
            execution_plan.plan_execution,
            spec,
            previous=previous,
            generation=body["metadata"].get("generation"),
            now=now,
            resumption=resumption,
        )
        plan = planned(children)
        status = plan.status
        turn: Decision | None = None  # R75: the queue's word, for an Execution that waits
        created: bool | SystemFailure = False
        if plan.create_index is not None and spec.queue is not None and not children:
            async with self._admission.deciding(namespace, spec.queue):
                turn = self._admission.turn(namespace, name, spec.queue, now=now)
                if turn.retry_at is not None:
                    self._wake_at(namespace, name, turn.retry_at)
                if turn.admit:
                    created = await self._create_phase(body, spec, plan)
                    if created is True:
                        self._admission.admitted(body, spec.queue, now=now)
                        self.nudge_queue(namespace, spec.queue)  # the others move up
        elif plan.create_index is not None:
            created = await self._create_phase(body, spec, plan)
        if created is True:
            # Planned again with the new Phase in: the status written now lists it, and the
            # Phase's own event then changes nothing this Execution reads (phase_changed).
            children = await self._children(namespace, name, body["metadata"]["uid"])
            plan = planned(children)
            status = plan.status
        if isinstance(created, SystemFailure):
            status = execution_plan.phase_refused(
                status,
                created,
                previous=previous,
                generation=body["metadata"].get("generation"),
                now=now,
            )
        for phase_name in plan.cancel:
            await self._kube.merge_patch(
                paths.phase(namespace, phase_name), {"spec": {"cancel": True}}
            )
        for phase_name in plan.interrupt:  # R44
            await self._kube.merge_patch(
                paths.phase(namespace, phase_name), {"spec": {"interrupt": True}}
            )
        if spec.queue is not None:
            status = self._admission.status(body, spec.queue, status, previous, turn, now=now)
        # R57: fitted before its notifications too, which compare it with the written one.
        status = status_budget.fit_execution(status)
        if spec.notify:
            status = await self._notifier.recorded(
                execution=message.ExecutionRef(namespace, name, body["metadata"]["uid"]),
                spec=spec,
                status=status,
                previous=previous,
                children=children,
                now=now,
            )
            status = status_budget.fit_execution(status)
        status = await self._write_status(body, spec, children, status, previous, now=now)
        if spec.notify and (wake := due.wake_at(status.notifications, now=now)) is not None:
            self._wake_at(namespace, name, wake)
        expiry = ttl.expires_at(spec, status, default=self._default_ttl)
        if expiry is not None and expiry <= now:
            # Its Phases, pods, ConfigMaps and Secrets follow through their owner references.
            await self._kube.delete(paths.execution(namespace, name), uid=body["metadata"]["uid"])
            logger.info("deleted %s/%s: its ttlSecondsAfterFinished has passed", namespace, name)
        elif expiry is not None:
            self._wake_at(namespace, name, expiry)

    async def _write_status(
        self,
        body: JsonObject,
        spec: ExecutionSpec,
        children: list[execution_plan.ChildPhase],
        status: ExecutionResourceStatus,
        previous: ExecutionResourceStatus,
        *,
        now: datetime,
    ) -> ExecutionResourceStatus:
        """The one write of an Execution's status; the status as written (R57 may squeeze it)."""
        patch = status_patch(status, previous)
        if patch is None:
            return status
        meta = body["metadata"]
        patched, status = await errors.write_status(
            self._kube,
            paths.status(paths.execution(meta["namespace"], meta["name"])),
            patch,
            status,
            previous,
            squeeze=lambda full: status_budget.fit_execution(full, budget=0),
        )
        settled = execution_plan.settled(
            spec, children, status, generation=meta.get("generation"), now=now
        )
        self._wrote(patched, settled=settled)
        if patched is not None:
            events.post_condition_changes(
                body, previous.conditions, status.conditions, untold=UNTOLD_CONDITIONS
            )
            if previous.finished_at is None and status.finished_at is not None:
                metrics.executions_finished.labels(
                    status.status, status.failure_classification or ""
                ).inc()
                logger.info(
                    "execution %s/%s ended %s", meta["namespace"], meta["name"], status.status
                )
        return status

    def nudge_queue(self, namespace: str, queue_name: str) -> None:
        """Decide again for every Execution waiting in the queue: one may start, or move up."""
        for member in queue.waiting(self._admission.members(namespace, queue_name)):
            task = asyncio.create_task(self.reconcile(namespace, member.name))
            self._nudges.add(task)
            task.add_done_callback(self._nudges.discard)

    async def _create_phase(
        self,
        body: dict[str, Any],
        spec: ExecutionSpec,
        plan: execution_plan.ExecutionPlan,
    ) -> bool | SystemFailure:
        """True when this call made the next Phase; False when it was there already."""
        made = await phase_creation.create_phase(self._kube, body, spec, plan)
        if isinstance(made, SystemFailure):
            return made
        phase, new = made
        self._created.created(body["metadata"]["uid"], phase)
        if new:
            self._phase_views[phase["metadata"]["uid"]] = phase_view.execution_view(phase)
            self._phase_created(phase)
        return new
