"""The operator's state in one process: the running Phase runners and the reconciler.

With leader election, only the leader acts: events are ignored while another
replica leads; the moment leadership is lost every runner and reconcile is
cancelled, and the API refuses to send for this replica (its connection is
fenced), even for a task that runs on before it hears, as after a SIGSTOP.
Once leadership is gained, every Phase and Execution is read afresh, since
the events ignored meanwhile will not come again.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from agentjobs.adapters import metrics, paths
from agentjobs.adapters.kube import Kube
from agentjobs.contract.phase import phase_status, pod_tracking
from agentjobs.controllers.execution.executions import ExecutionReconciler
from agentjobs.controllers.execution.queue_admission import QueueAdmission
from agentjobs.controllers.phase import phase_runner, pod_release
from agentjobs.controllers.phase.phase_runner import PhaseRunner
from agentjobs.controllers.scheduling.cron_executions import CronReconciler
from agentjobs.kube import naming, ownership
from agentjobs.runtime import backoff
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.errors import log_retry
from agentjobs.runtime.leadership import Leadership
from agentjobs.runtime.observed import Observed
from agentjobs.services import notifier
from agentjobs.services.phase_storage import PhaseStorage

logger = logging.getLogger(__name__)


class Operator:
    """Starts one runner per unfinished Phase and routes events to it."""

    def __init__(
        self,
        kube: Kube,
        config: OperatorConfig,
        storage: PhaseStorage | None,
        observed: Observed,
        leadership: Leadership | None = None,
    ) -> None:
        self._leadership = leadership
        self._observed = observed
        self.kube = kube if leadership is None else kube.fenced(self._refuse_unless_leading)
        self.config = config
        self.storage = storage
        self._notifier = notifier.from_config(self.kube, config)
        # Kept across leader terms: an admission this process made stays counted (R75).
        self._admission = QueueAdmission(observed)
        # Phases this leader term created whose runner has not started. Only a runner writes
        # a Phase's status, so the first event of one, showing none, is the Phase as it is.
        self._made_this_term: set[str] = set()
        self.executions = self._execution_reconciler()
        self.crons = CronReconciler(self.kube, observed, config.schedule_clock)
        self._runners: dict[tuple[str, str], tuple[PhaseRunner, asyncio.Task[None]]] = {}
        # Reconciles and resyncs: they act for the leader, so they stop with its leadership.
        self._tasks: set[asyncio.Task[None]] = set()
        self._election: asyncio.Task[None] | None = None
        # kopf posts Events only from the context of its handlers: a resync runs in a copy.
        self._kopf_context: contextvars.Context | None = None
        self._kopf_context_known = asyncio.Event()

    def _execution_reconciler(self) -> ExecutionReconciler:
        return ExecutionReconciler(
            self.kube,
            self.storage,
            self._notifier,
            self._observed,
            self._admission,
            default_ttl=self.config.default_ttl,
            phase_created=self._phase_created,
        )

    def _phase_created(self, body: dict[str, Any]) -> None:
        meta = body["metadata"]
        if (meta["namespace"], meta["name"]) not in self._runners:
            self._made_this_term.add(meta["uid"])

    @property
    def leading(self) -> bool:
        return self._leadership is None or self._leadership.leading

    def start(self) -> None:
        if self._leadership is not None:
            run = self._leadership.run(started=self._resync, stopped=self._stop_acting)
            self._election = asyncio.create_task(run, name="leader election")

    async def reconcile(self, namespace: str, name: str) -> None:
        """Reconcile an Execution, in a task that a loss of leadership can cancel."""
        self._remember_kopf_context()
        if self.leading:
            await asyncio.wait([self._track(self.executions.reconcile(namespace, name))])

    async def reconcile_cron(self, namespace: str, name: str) -> None:
        """Reconcile a CronExecution (R74), as the leader only."""
        self._remember_kopf_context()
        if self.leading:
            await asyncio.wait([self._track(self.crons.reconcile(namespace, name))])

    def queue_changed(self, namespace: str, name: str) -> None:
        """A queue's limits, or its members, changed: its waiting Executions are decided
        again (R75)."""
        self._remember_kopf_context()
        if self.leading:
            self.executions.nudge_queue(namespace, name)

    async def execution_seen(self, body: dict[str, Any]) -> None:
        """An Execution's event: reconcile it, unless the event only shows this replica's
        own last status write (a thousand Executions made that half of all reconciles)."""
        meta = body["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        self.executions.watch_shows(body)
        if not self.executions.echoes_own_write(namespace, name, meta["resourceVersion"]):
            await self.reconcile(namespace, name)

    def execution_deleted(self, body: dict[str, Any]) -> None:
        meta = body["metadata"]
        self.crons.run_deleted(meta["uid"])
        self.executions.execution_deleted(meta["namespace"], meta["name"])

    def phase_seen(self, namespace: str, name: str, body: dict[str, Any]) -> None:
        self._remember_kopf_context()
        if not self.leading:
            return
        # Read raw, not validated: this runs on each of a Phase's events, and its runner
        # validates the Phase it reads.
        ended = (body.get("status") or {}).get("status") in phase_status.TERMINAL
        if ended or body["metadata"].get("deletionTimestamp"):
            return
        cancel = bool(body.get("spec", {}).get("cancel"))
        interrupt = bool(body.get("spec", {}).get("interrupt"))
        running = self._runners.get((namespace, name))
        if running is None:
            uid = body["metadata"]["uid"]
            current = uid in self._made_this_term and not body.get("status")
            self._made_this_term.discard(uid)
            runner = PhaseRunner(
                self.kube,
                self.config,
                self.storage,
                self._observed,
                namespace=namespace,
                name=name,
                current=body if current else None,
            )
            task = asyncio.create_task(self._keep_running(runner), name=f"phase {namespace}/{name}")
            self._runners[namespace, name] = (runner, task)
            running = (runner, task)
        if cancel or interrupt:
            generation = body["metadata"].get("generation")
            running[0].notify(cancel=cancel, interrupt=interrupt, generation=generation)

    def phase_deleted(self, namespace: str, name: str, uid: str) -> None:
        self.executions.phase_deleted(uid)
        self._made_this_term.discard(uid)
        running = self._runners.pop((namespace, name), None)
        if running is not None:
            running[1].cancel()
        if self.leading:
            self._track(pod_release.release_pods_of(self.kube, namespace, name, uid))

    def pod_seen(self, namespace: str, phase: str, pod: dict[str, Any]) -> None:
        """Wake the pod's runner; without one, let the pod go if its Phase is done with it."""
        running = self._runners.get((namespace, phase))
        if running is not None:
            running[0].notify()
        # A runner releases its own pod; one a Phase of the same name left behind (deleted
        # and applied again) is the operator's to let go, or the new runner waits for ever.
        uid = running[0].phase_uid if running is not None else None
        if self.leading and pod_tracking.tracked(pod):
            foreign = not ownership.owned_by(pod, uid or "")
            if foreign or pod_tracking.deletion_to_record(pod) is not None:
                self._track(pod_release.look_after(self.kube, pod, release_it=foreign))

    async def _keep_running(self, runner: PhaseRunner) -> None:
        """Run until the phase is resolved (:func:`phase_runner.run_to_end`)."""
        logger.info("phase %s/%s: runner started", runner.namespace, runner.name)
        metrics.active_runners.inc()
        try:
            await phase_runner.run_to_end(runner)
        finally:
            metrics.active_runners.dec()
            logger.info("phase %s/%s: runner stopped", runner.namespace, runner.name)
            current = self._runners.get((runner.namespace, runner.name))
            if current is not None and current[0] is runner:
                del self._runners[runner.namespace, runner.name]

    def _track(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _remember_kopf_context(self) -> None:
        if self._kopf_context is None:
            self._kopf_context = contextvars.copy_context()
            self._kopf_context_known.set()

    def _resync(self) -> None:
        self._track(self._resync_in_kopf_context())

    async def _resync_in_kopf_context(self) -> None:
        # Before kopf's first event there is no context to post from, and nothing to resync:
        # kopf's first listing brings an event for every object there is.
        await self._kopf_context_known.wait()
        assert self._kopf_context is not None
        work = self._kopf_context.run(self._track, self._act_on_everything())
        await asyncio.wait([work])

    async def _act_on_everything(self) -> None:
        """Start runners for every unfinished Phase, reconcile every Execution, release pods
        nobody needs."""
        delays = backoff.API.delays()
        while True:
            try:
                for path in self._collections(paths.phase, paths.all_phases):
                    for item in await self.kube.list(path, label_selector=""):
                        meta = item["metadata"]
                        self.phase_seen(meta["namespace"], meta["name"], item)
                for path in self._collections(paths.execution, paths.all_executions):
                    for item in await self.kube.list(path, label_selector=""):
                        meta = item["metadata"]
                        await self.executions.reconcile(meta["namespace"], meta["name"])
                for path in self._collections(paths.cron_execution, paths.all_cron_executions):
                    for item in await self.kube.list(path, label_selector=""):
                        meta = item["metadata"]
                        await self.crons.reconcile(meta["namespace"], meta["name"])
                # Pods whose Phase went while no replica led are let go now.
                for path in self._collections(paths.pod, paths.all_pods):
                    for item in await self.kube.list(path, label_selector=naming.LABEL_PHASE):
                        labels = item["metadata"]["labels"]
                        self.pod_seen(
                            item["metadata"]["namespace"], labels[naming.LABEL_PHASE], item
                        )
                return
            except Exception as error:  # sorted in log_retry; the resync must still happen
                delay = next(delays)
                log_retry(logger, "listing phases and executions", error, delay)
            await asyncio.sleep(delay)

    def _collections(
        self, namespaced: Callable[[str], str], everywhere: Callable[[], str]
    ) -> list[str]:
        return [namespaced(n) for n in self.config.namespaces] or [everywhere()]

    def _refuse_unless_leading(self) -> None:
        if not self.leading:
            self._stop_acting("its lease ran out before it was renewed")
            raise asyncio.CancelledError  # this request's task is one of those just cancelled

    def _stop_acting(self, reason: str) -> list[asyncio.Task[None]]:
        """Cancel every runner, reconcile and retry at once; the tasks cancelled."""
        tasks = [task for _, task in self._runners.values()] + list(self._tasks)
        self._runners.clear()
        for task in tasks:
            task.cancel()
        self.executions.stop()
        self.crons.stop()
        # A stopped reconciler keeps its cancelled retries on record: the next leader term
        # starts with a fresh one.
        self.executions = self._execution_reconciler()
        self._made_this_term.clear()
        if tasks:
            logger.warning("stopped %d runners and reconciles: %s", len(tasks), reason)
        return tasks

    async def stop(self) -> None:
        if self._election is not None:
            self._election.cancel()
            await asyncio.gather(self._election, return_exceptions=True)
        await asyncio.gather(*self._stop_acting("the operator stops"), return_exceptions=True)
        if self._leadership is not None:
            await self._leadership.release()  # everything it guarded has stopped
        await self.kube.close()
