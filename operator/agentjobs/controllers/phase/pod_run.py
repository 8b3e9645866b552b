"""One of a phase's pods run to its end, an agent attempt's and a grader's alike.

The pod is stopped when the phase is told to stop (R22, R44), its main container's start is
awaited (R61), its log read live to its end (R14), its harvester's last sync awaited and its
final status taken in; then its transcript is stored (R58). What differs between the two
kinds of pod is a parameter: the main container, the log's reader, where the transcript goes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic

from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.controllers.phase import pod_wait
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.controllers.phase.phase_log import LogReading, VerdictT
from agentjobs.controllers.phase.transcript import Transcript


@dataclass(frozen=True)
class PodRun(Generic[VerdictT]):
    """How one pod's run ended. ``verdict`` and ``transcript`` are None when its main
    container never started (the transcript is stored and closed: its counts and hash stay);
    ``harvest_seconds`` is how long its harvester's last sync kept the pod after its log
    ended."""

    run: RunFacts
    verdict: VerdictT | None = None
    transcript: Transcript | None = None
    log_ended_at: float | None = None  # time.monotonic()
    harvest_seconds: float | None = None


async def run_pod(
    ctx: PhaseContext,
    pod_name: str,
    *,
    container: str,
    reading: Callable[[], LogReading[VerdictT]],
    transcript_at: Attempt,
) -> PodRun[VerdictT]:
    """The pod ``pod_name`` (already created) from its start to its end."""
    stopper = asyncio.create_task(pod_wait.stop_when_requested(ctx, pod_name))
    try:
        waited = await pod_wait.wait_for_start(ctx, pod_name, container)
        if isinstance(waited, RunFacts):
            return await unstarted(ctx, pod_name, waited, container=container)
        result = await reading().read()
        try:
            log_ended_at = time.monotonic()
            pod = await pod_wait.settle(ctx, pod_name, container)
            harvest_seconds = time.monotonic() - log_ended_at
            run = result.run
            if pod is not None:
                run = pod_wait.with_final_status(ctx, run, pod, container)
            await store_transcript(ctx, transcript_at, result.transcript)
        finally:
            result.transcript.close()
        return PodRun(run, result.verdict, result.transcript, log_ended_at, harvest_seconds)
    finally:
        stopper.cancel()


async def unstarted(
    ctx: PhaseContext, pod_name: str, run: RunFacts, *, container: str
) -> PodRun[VerdictT]:
    """A run whose main container never started (or whose pod was never made): a pod left
    waiting is removed, unless ``keepPods`` keeps it to show why."""
    await pod_wait.settle(ctx, pod_name, container)
    return PodRun(run)


async def store_transcript(ctx: PhaseContext, attempt: Attempt, transcript: Transcript) -> None:
    """Store what was kept of the log, ended with a note when it was truncated (R58)."""
    transcript.seal()
    if ctx.storage is None or attempt.bucket is None or attempt.root is None:
        return
    await ctx.storage.store_transcript(
        attempt.bucket, attempt.root, transcript.file, transcript.stored, ctx.report_waiting
    )
