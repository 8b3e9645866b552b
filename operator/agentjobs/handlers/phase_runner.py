"""Run one Phase to its end: pod, live log, checkpoint, harvest, verdict.

One asyncio task per running Phase, never a thread. The stages live in their
own modules: the pod's life (:mod:`phase_pod`), reading the log
(:mod:`phase_log`) and finishing (:mod:`phase_finish`); this module puts them
in order. Once the agent's log is read to its end, the transcript is stored
and the run's facts are checkpointed in the Phase's status before anything
else, so the runner is safe to kill at any moment: a new one finishes from
the checkpoint (even without the pod), or, before it, finds the same pod by
its deterministic name and the Phase's UID and reads the log again, checking
it against the progress already recorded (R14).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import UTC, datetime, timedelta

from agentjobs.adapters import paths
from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.handlers import phase_finish, phase_pod, pod_release
from agentjobs.handlers.config import OperatorConfig
from agentjobs.handlers.phase_context import Attempt, PhaseContext
from agentjobs.handlers.phase_log import LogReading, Transcript
from agentjobs.handlers.phase_storage import PhaseStorage
from agentjobs.logic import phase_status, pod_state, pods, resolution, run_checkpoint
from agentjobs.logic.pod_state import Stage
from agentjobs.logic.transcript_reader import ReaderVerdict
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resources import PhaseResourceStatus

logger = logging.getLogger(__name__)
RECHECK_SECONDS = 2.0
# A pod still there this long past its deletion deadline has no kubelet stopping it (its
# node is gone): it is not waited on any longer.
HARVEST_GRACE = timedelta(seconds=30)


class PhaseRunner:
    """Drives one Phase; ``notify`` wakes it when its pod or its spec changes."""

    def __init__(
        self,
        kube: Kube,
        config: OperatorConfig,
        storage: PhaseStorage | None,
        *,
        namespace: str,
        name: str,
    ) -> None:
        self._kube = kube
        self._config = config
        self._storage = storage
        self.namespace = namespace
        self.name = name
        self._ctx: PhaseContext | None = None
        self._cancel = False

    @property
    def phase_uid(self) -> str | None:
        """The UID of the Phase this runner drives, once it has read it."""
        return None if self._ctx is None else self._ctx.uid

    def notify(self, *, cancel: bool = False) -> None:
        """Wake the runner: its pod changed, or (``cancel``) its Phase was told to stop."""
        self._cancel = self._cancel or cancel
        if self._ctx is not None:
            self._ctx.cancel_requested = self._ctx.cancel_requested or cancel
            self._ctx.changed.set()

    async def run(self) -> None:
        body = await self._kube.get(paths.phase(self.namespace, self.name))
        if body is None:
            return
        ctx = PhaseContext(self._kube, self._config, self._storage, body)
        ctx.cancel_requested = ctx.cancel_requested or self._cancel
        self._ctx = ctx
        if phase_status.is_terminal(ctx.status):
            return
        attempt = ctx.attempt(ctx.status.attempt or 1)
        if ctx.status.run is not None:  # judged before a restart: finish from the record
            run, verdict = run_checkpoint.restore(ctx.status.run)
            await self._settle_pod(ctx, attempt)
            await _release_pod(ctx, attempt)
            await phase_finish.finish(ctx, attempt, run, verdict)
            return
        if ctx.status.pod_name is None:
            failure = None if ctx.cancel_requested else await phase_pod.create_pod(ctx, attempt)
            if ctx.cancel_requested or failure is not None:
                facts = _never_ran(cancelled=ctx.cancel_requested, failure=failure)
                await self._judged(ctx, attempt, facts, None, None)
                return
            message = f"pod {attempt.pod_name} runs the agent"
            if not await ctx.write_status(_running(ctx, attempt, message)):
                return
        canceller = asyncio.create_task(self._cancel_when_requested(ctx, attempt.pod_name))
        try:
            waited = await self._wait_for_agent(ctx, attempt.pod_name)
            if isinstance(waited, resolution.RunFacts):
                await self._judged(ctx, attempt, waited, None, None)
                return
            result = await LogReading(ctx, attempt.pod_name).read()
            await self._judged(ctx, attempt, result.run, result.verdict, result.transcript)
        finally:
            canceller.cancel()

    async def _judged(
        self,
        ctx: PhaseContext,
        attempt: Attempt,
        run: resolution.RunFacts,
        verdict: ReaderVerdict | None,
        transcript: Transcript | None,
    ) -> None:
        """Let the harvester finish, store the transcript, checkpoint the run's facts (with
        what the pod's final status adds), then collect and finish."""
        pod = await self._settle_pod(ctx, attempt)
        if pod is not None and transcript is not None:
            run = _with_final_status(ctx, run, pod)
        if transcript is not None:
            await phase_finish.store_transcript(ctx, attempt, transcript)
        record = run_checkpoint.record(
            run,
            verdict,
            transcript_bytes=transcript.size if transcript else 0,
            transcript_sha256=transcript.sha256 if transcript else "",
        )
        if not await ctx.write_status(ctx.status.model_copy(update={"run": record})):
            return
        await _release_pod(ctx, attempt)
        run, restored = run_checkpoint.restore(record)
        await phase_finish.finish(ctx, attempt, run, restored)

    async def _settle_pod(self, ctx: PhaseContext, attempt: Attempt) -> JsonObject | None:
        """A pod whose agent never started is removed (nothing of it is left to sync); any
        other is left to its harvester's last sync. The pod as last seen, if it is there."""
        pod = await ctx.current_pod(attempt.pod_name)
        if pod is None:
            return None
        if pod_state.agent_state(pod, pods.AGENT_CONTAINER).stage is Stage.WAITING:
            await phase_pod.delete_pod(ctx, pod, grace_seconds=0)
            return None
        return await self._wait_for_pod_end(ctx, attempt)

    async def _wait_for_agent(
        self, ctx: PhaseContext, pod_name: str
    ) -> JsonObject | resolution.RunFacts:
        """The pod once its agent has started, or the run facts of a pod that never will."""
        while True:
            pod = await ctx.current_pod(pod_name)
            if pod is None:
                return _never_ran(cancelled=ctx.cancel_requested, interrupted=True)
            state = pod_state.agent_state(pod, pods.AGENT_CONTAINER)
            if state.stage is not Stage.WAITING:
                return pod
            interrupted = ctx.interruption(pod)
            if interrupted is not None:
                return _never_ran(interrupted=True, failure=interrupted)
            if ctx.cancel_requested and ctx.deleted_by_operator:
                return _never_ran(cancelled=True)
            now = datetime.now(UTC)
            timeout = self._config.pending_timeout
            failure = pod_state.pending_failure(pod, state, now=now, timeout=timeout)
            if failure is not None:
                return _never_ran(failure=failure)
            deadline = pod_state.pending_deadline(pod, timeout=timeout)
            left = (deadline - now).total_seconds() if deadline else RECHECK_SECONDS
            await ctx.wait(min(RECHECK_SECONDS, left))

    async def _wait_for_pod_end(self, ctx: PhaseContext, attempt: Attempt) -> JsonObject | None:
        """Until the pod has ended, so its harvester's last sync is done and its final status
        (where the kubelet writes an eviction) is in; None when it is gone."""
        waited = 0.0
        while True:
            pod = await ctx.current_pod(attempt.pod_name)
            if pod is None or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                return pod
            deadline = pod_state.removal_deadline(pod)
            overdue = deadline is not None and datetime.now(UTC) - deadline > HARVEST_GRACE
            if overdue or pod_state.node_lost(pod):
                return pod  # no kubelet is stopping it: its manifest says how far it got
            if waited >= RECHECK_SECONDS and ctx.storage is not None:
                line = await ctx.kube.log_tail(
                    ctx.namespace, attempt.pod_name, pods.HARVESTER_CONTAINER
                )
                await ctx.report_waiting(
                    f"the agent has finished; waiting for the harvester: {line or 'syncing'}"
                )
            await ctx.wait(RECHECK_SECONDS)
            waited += RECHECK_SECONDS

    async def _cancel_when_requested(self, ctx: PhaseContext, pod_name: str) -> None:
        while not ctx.cancel_requested:
            await ctx.wait(RECHECK_SECONDS)
        pod = await ctx.current_pod(pod_name)
        if pod is not None:
            await phase_pod.delete_pod(ctx, pod, grace_seconds=self._config.cancel_grace_seconds)
        ctx.changed.set()


async def _release_pod(ctx: PhaseContext, attempt: Attempt) -> None:
    """The run is recorded: the pod may go whenever it is deleted."""
    pod = await ctx.current_pod(attempt.pod_name)
    if pod is not None:
        await pod_release.release(ctx.kube, pod)


def _running(ctx: PhaseContext, attempt: Attempt, message: str) -> PhaseResourceStatus:
    return phase_status.running(
        ctx.status,
        pod_name=attempt.pod_name,
        attempt=attempt.number,
        message=message,
        generation=ctx.generation,
        now=datetime.now(UTC),
    )


def _with_final_status(
    ctx: PhaseContext, run: resolution.RunFacts, pod: JsonObject
) -> resolution.RunFacts:
    """The run's facts with what only the pod's final status says: the kubelet writes a
    deadline's or an eviction's reason there, after the agent's own exit."""
    agent = pod_state.agent_state(pod, pods.AGENT_CONTAINER)
    if run.cancelled or run.interrupted or agent.stage is not Stage.TERMINATED:
        return run
    cut = ctx.interruption(pod, agent)
    if cut is not None:
        return dataclasses.replace(run, interrupted=True, system_failure=cut)
    failure = pod_state.termination_failure(pod, agent)
    return dataclasses.replace(run, system_failure=failure or run.system_failure)


def _never_ran(
    *, cancelled: bool = False, interrupted: bool = False, failure: SystemFailure | None = None
) -> resolution.RunFacts:
    return resolution.RunFacts(
        exit_code=None,
        stream_intact=False,
        cancelled=cancelled,
        interrupted=interrupted and not cancelled,
        system_failure=failure,
    )
