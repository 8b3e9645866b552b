"""Reconcile a CronExecution: make its Executions on schedule, cancel, prune, report (R74).

Level-triggered like the Execution reconciler: every event of a CronExecution or of an
Execution it controls, and a wake-up at its next scheduled time, reads the state (as the
watches show it) and acts on the pure plan of :mod:`cron_plan`. A run's name comes from
its scheduled time, so a restarted operator, or one whose status write was lost, finds
the run it made and never makes a twin. The status has this one writer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from datetime import datetime

from agentjobs.adapters import metrics, paths
from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.contract.scheduling import cron, cron_plan, cron_status
from agentjobs.kube import admission, ownership
from agentjobs.kube.status_patch import status_patch
from agentjobs.models.scheduling import CronExecutionSpec, CronExecutionStatus
from agentjobs.runtime import backoff, errors, events
from agentjobs.runtime.errors import log_retry
from agentjobs.runtime.observed import Observed
from agentjobs.runtime.own_creations import OwnCreations
from agentjobs.runtime.schedule_clock import ScheduleClock

logger = logging.getLogger(__name__)


class CronReconciler:
    def __init__(self, kube: Kube, observed: Observed, clock: ScheduleClock) -> None:
        self._kube = kube
        self._observed = observed
        self._clock = clock
        self._locks: defaultdict[tuple[str, str], asyncio.Lock] = defaultdict(asyncio.Lock)
        # One wake-up per CronExecution: at its next scheduled time, or to retry.
        self._wakeups: dict[tuple[str, str], tuple[float, asyncio.Task[None]]] = {}
        self._failures: dict[tuple[str, str], int] = {}
        # The plan's Events last posted for each CronExecution.
        self._told: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
        self._created = OwnCreations()  # runs made, until the watch shows them

    def run_deleted(self, uid: str) -> None:
        """The watch showed an Execution's deletion: a run made here and never shown is no
        more."""
        self._created.deleted(uid)

    def stop(self) -> None:
        for _, task in self._wakeups.values():
            task.cancel()
        self._wakeups.clear()

    async def reconcile(self, namespace: str, name: str) -> None:
        """Reconcile now; after a failure, again later with backoff."""
        key = (namespace, name)
        async with self._locks[key]:
            try:
                await self._reconcile(namespace, name)
                self._failures.pop(key, None)
            except Exception as error:  # sorted in log_retry; the schedule must go on
                failures = self._failures[key] = self._failures.get(key, 0) + 1
                delay = backoff.API.delay(failures - 1)
                metrics.reconcile_errors.inc()
                log_retry(logger, f"cronexecution {namespace}/{name}", error, delay)
                self._wake_in(namespace, name, delay)

    async def _reconcile(self, namespace: str, name: str) -> None:
        body = self._observed.cron_execution(namespace, name)
        if body is None or body["metadata"].get("deletionTimestamp"):
            return
        meta = body["metadata"]
        spec = CronExecutionSpec.model_validate(body["spec"])
        recorded = CronExecutionStatus.model_validate(body.get("status") or {})
        found = [
            cron_status.run_of(execution)
            for execution in self._created.with_unseen(
                meta["uid"], self._observed.executions_owned_by(meta["uid"])
            )
            if execution["metadata"]["namespace"] == namespace
        ]
        now = self._clock.now()
        try:
            schedule = cron.parse(spec.schedule, spec.time_zone)
        except cron.ScheduleError as error:
            await self._write_status(body, recorded, found, None, None, str(error), now)
            return
        created = datetime.fromisoformat(meta["creationTimestamp"].replace("Z", "+00:00"))
        state = cron_status.state(
            name, spec, schedule, created=created, recorded=recorded, runs=[r for r, _, _ in found]
        )
        plan = cron_plan.plan(state, [run for run, _, _ in found], now=now)
        uids = {run.name: uid for run, uid, _ in found}
        for run in plan.cancel:  # Replace
            cancel = {"spec": {"cancel": True}}
            await self._kube.merge_patch(paths.execution(namespace, run), cancel)
            events.post(body, reason="Replaced", message=f"cancelled {run} to start the next run")
        # Every Execution event reconciles again with the same plan: each Event once.
        told = self._told.get((namespace, name), frozenset())
        self._told[namespace, name] = frozenset(plan.events)
        for reason, message in plan.events:
            if (reason, message) not in told:
                events.post(body, reason=reason, message=message, warning=reason != "RunWaits")
        last_scheduled = state.last_scheduled
        if plan.create is not None and plan.scheduled is not None:
            made = await self._create(body, spec, plan.create, plan.scheduled)
            if made is not None:
                found.append(cron_status.run_of(made))
                last_scheduled = plan.scheduled
        for run in plan.delete:
            await self._kube.delete(paths.execution(namespace, run), uid=uids[run])
        kept = [entry for entry in found if entry[0].name not in plan.delete]
        await self._write_status(body, recorded, kept, last_scheduled, plan.next_time, None, now)
        if plan.next_time is not None:
            self._wake_in(namespace, name, self._clock.seconds_until(plan.next_time))

    async def _create(
        self, body: JsonObject, spec: CronExecutionSpec, run: str, scheduled: datetime
    ) -> JsonObject | None:
        """The Execution made for ``scheduled``; None when one of its name was there (made
        before a restart, its event still to come) or was refused."""
        meta = body["metadata"]
        namespace = meta["namespace"]
        manifest = cron_status.execution_manifest(
            spec, cron_name=meta["name"], cron_uid=meta["uid"], run_name=run, scheduled=scheduled
        )
        try:
            made = await self._kube.create(paths.execution(namespace), manifest)
        except ApiError as error:
            refused = admission.refusal_blocker(
                code=error.status, reason=error.reason, message=error.message, subject="Execution"
            )
            if refused is None:  # the operator's own permissions, an outage: retried
                raise
            # The template is refused for good (a CEL rule, a quota): said, and tried again
            # at the next scheduled time, which may meet a fixed template.
            events.post(
                body, reason="FailedCreate", message=f"{run}: {error.message}", warning=True
            )
            return None
        if made is None:
            existing = await self._kube.get(paths.execution(namespace, run))
            if existing is not None and ownership.owned_by(existing, meta["uid"]):
                self._created.created(meta["uid"], existing)  # its event may be yet to come
            elif existing is not None:
                events.post(
                    body,
                    reason="FailedCreate",
                    message=f"an Execution named {run} exists and is not this one's",
                    warning=True,
                )
            return None
        self._created.created(meta["uid"], made)
        logger.info("created execution %s/%s for %s", namespace, run, scheduled.isoformat())
        events.post(body, reason="SuccessfulCreate", message=f"created Execution {run}")
        return made

    async def _write_status(
        self,
        body: JsonObject,
        recorded: CronExecutionStatus,
        found: list[tuple[cron_plan.Run, str, datetime | None]],
        last_scheduled: datetime | None,
        next_time: datetime | None,
        schedule_error: str | None,
        now: datetime,
    ) -> None:
        meta = body["metadata"]
        status = cron_status.status(
            recorded,
            found,
            last_scheduled=last_scheduled,
            next_time=next_time,
            schedule_error=schedule_error,
            generation=meta.get("generation"),
            now=now,
        )
        patch = status_patch(status, recorded)
        if patch is None:
            return
        path = paths.status(paths.cron_execution(meta["namespace"], meta["name"]))
        # Its size is bounded by the runs there are: nothing to squeeze.
        await errors.write_status(self._kube, path, patch, status, recorded, squeeze=lambda s: s)
        events.post_condition_changes(body, recorded.conditions, status.conditions)

    def _wake_in(self, namespace: str, name: str, seconds: float) -> None:
        """Reconcile again in ``seconds`` (real), unless a wake-up is due sooner."""
        key = (namespace, name)
        due = asyncio.get_running_loop().time() + seconds
        current = self._wakeups.get(key)
        if current is not None:
            if current[0] <= due:
                return
            current[1].cancel()

        async def wake() -> None:
            await asyncio.sleep(seconds)
            self._wakeups.pop(key, None)
            await self.reconcile(namespace, name)

        self._wakeups[key] = (due, asyncio.create_task(wake()))
