"""R70: an agent's limits watched while its log is read, and its stop asked of the pod.

The first event past a spend or turn limit, or a silence longer than ``idleSeconds`` while
the agent runs, has the stop recorded in the Phase's status, announced, and asked of the
pod (its ``agentjobs.io/stop`` annotation, which its timekeeper answers by failing the
agent's liveness probe); the run then ends as that limit's failure, whatever its exit. An
Event also tells when a run passes 80% of a limit.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from agentjobs.adapters import agent_stop, metrics, paths
from agentjobs.adapters.kube import ApiError
from agentjobs.contract.limits import guard
from agentjobs.contract.phase import phase_status
from agentjobs.controllers.phase.phase_context import PhaseContext
from agentjobs.kube import agent_timeout, pod_state
from agentjobs.kube.pod_state import Stage
from agentjobs.models.contract import SystemFailure
from agentjobs.models.limits import Limits
from agentjobs.runtime import events

logger = logging.getLogger(__name__)
IDLE_CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class LimitWatch:
    """The limits an agent's log is read against, and what its reader says of them."""

    limits: Limits | None
    budget: guard.Budget | None  # R71: the Execution's limits, and what was used before
    passed: Callable[[], guard.Crossing | None]
    spent: Callable[[], guard.Spent]


class LimitGuard:
    """Watches one pod's agent; ``status_writes`` is the lock its log's reading writes
    the Phase's status under, since the idle watch writes beside it."""

    def __init__(
        self,
        ctx: PhaseContext,
        pod_name: str,
        container: str,
        watch: LimitWatch,
        status_writes: asyncio.Lock,
    ) -> None:
        self._ctx = ctx
        self._pod_name = pod_name
        self._container = container
        self._watch = watch
        self._status_writes = status_writes
        self._last_byte = time.monotonic()
        self._announced: set[tuple[guard.Limit, bool]] = set()  # the 80% Events posted
        self._idle_watch: asyncio.Task[None] | None = None
        self._telling: asyncio.Task[bool] | None = None  # the stop told to the timekeeper

    async def start(self) -> None:
        """A stop recorded before a restart is asked again; the idle watch begins."""
        if self.recorded() is not None:
            await self._ask_pod_to_stop()
        limits = self._watch.limits
        if limits is not None and limits.idle_seconds is not None:
            self._idle_watch = asyncio.create_task(self._watch_idle(limits))

    def end(self) -> None:
        for task in (self._idle_watch, self._telling):
            if task is not None:
                task.cancel()

    def recorded(self) -> SystemFailure | None:
        log = self._ctx.status.log
        return log.stopped_by if log is not None else None

    def run_stop(self) -> SystemFailure | None:
        """The limit the log passed (a function of the log, so a re-read agrees), else the
        silence the operator stopped."""
        crossing = self._watch.passed()
        return crossing.failure if crossing is not None else self.recorded()

    async def read(self) -> None:
        """Bytes were read: the silence ends, and the limits are checked."""
        self._last_byte = time.monotonic()
        if self.recorded() is not None:
            return
        crossing = self._watch.passed()
        if crossing is not None:
            await self._stop(crossing)
            return
        watch = self._watch
        for near in guard.approaching_any(watch.limits, watch.budget, watch.spent()):
            if near not in self._announced:
                self._announced.add(near)
                limit, execution = near
                who = "the execution's runs have" if execution else "the agent has"
                events.post(
                    self._ctx.body,
                    reason="LimitApproaching",
                    message=f"{who} used 80% of its {limit.value}",
                    warning=True,
                )

    async def _watch_idle(self, limits: Limits) -> None:
        """Stops an agent that printed nothing for its ``idleSeconds`` while it ran; an API
        error is tried again a second later (the watch ends with the log's reading)."""
        while self.recorded() is None:
            await asyncio.sleep(IDLE_CHECK_SECONDS)
            crossing = guard.idle(limits, time.monotonic() - self._last_byte)
            if crossing is None:
                continue
            try:
                pod = await self._ctx.current_pod(self._pod_name)
                running = pod is not None and (
                    pod_state.agent_state(pod, self._container).stage is Stage.RUNNING
                )
                if not running:  # an agent that has ended is not stuck
                    return
                await self._stop(crossing)
            except (TimeoutError, ApiError, aiohttp.ClientError) as error:
                logger.info("the idle stop of %s waits: %s", self._pod_name, error)

    async def _stop(self, crossing: guard.Crossing) -> None:
        """Record the stop, announce it, then ask it of the pod (in that order, so that a
        restarted operator finds what it asked)."""
        ctx = self._ctx
        failure = crossing.failure
        async with self._status_writes:
            await ctx.write_status(phase_status.with_stop(ctx.status, failure))
        events.post(ctx.body, reason="LimitExceeded", message=failure.message, warning=True)
        metrics.limit_stops.labels(crossing.limit.value).inc()
        await self._ask_pod_to_stop()
        logger.info("%s/%s: %s; asked to stop", ctx.namespace, self._pod_name, failure.message)

    async def _ask_pod_to_stop(self) -> None:
        """Tell the timekeeper straight, when it can be reached, then annotate the pod: the
        annotation is what a restarted operator finds, and what works where the network
        does not."""
        failure = self.recorded()
        pod = await self._ctx.current_pod(self._pod_name)
        if failure is None or pod is None:
            return
        pod_ip = (pod.get("status") or {}).get("podIP")
        if pod_ip and self._telling is None:  # beside the annotation: it may take seconds
            stop_token = agent_stop.token(self._ctx.uid, self._pod_name)
            self._telling = asyncio.create_task(agent_stop.push(pod_ip, stop_token, failure.code))
        meta = pod["metadata"]
        annotations = {agent_timeout.STOP_ANNOTATION: failure.code}
        patch = {"metadata": {"uid": meta["uid"], "annotations": annotations}}
        try:
            await self._ctx.kube.merge_patch(paths.pod(self._ctx.namespace, meta["name"]), patch)
        except ApiError as error:
            if error.status not in (404, 409):  # gone, or another pod of that name
                raise
