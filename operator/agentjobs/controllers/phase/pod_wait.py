"""Waiting on one of a phase's pods (an agent attempt's or a grader's): for its main
container to start, for its harvester's last sync, and letting it go once recorded."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from agentjobs.adapters.kube import JsonObject
from agentjobs.contract.phase import phase_core
from agentjobs.contract.resolution import pod_start, resolution
from agentjobs.controllers.phase import phase_pod
from agentjobs.controllers.phase.phase_context import PhaseContext
from agentjobs.kube import conditions, pod_state, pods
from agentjobs.kube.pod_state import Stage

RECHECK_SECONDS = 2.0
# A pod ends 1-3 s after its agent on a quiet node (the kubelet stops the harvester at its
# next relist, then the pod's sandbox): only a harvest that takes longer is shown, so most
# phases with storage are spared a log read and a status write.
HARVEST_SHOWN_SECONDS = 10.0
TAIL_INTERVAL_MAX = 30.0
# A pod still there this long past its deletion deadline has no kubelet stopping it (its
# node is gone): it is not waited on any longer.
HARVEST_GRACE = timedelta(seconds=30)


async def wait_for_start(
    ctx: PhaseContext, pod_name: str, container: str = pods.AGENT_CONTAINER
) -> JsonObject | resolution.RunFacts:
    """The pod once its main container has started, or the run facts of one that never
    will (R61); what stands in its way meanwhile is shown in the phase's status."""
    shown: pod_start.Trouble | None = None
    before = _running_message(ctx)
    while True:
        pod = await ctx.current_pod(pod_name)
        if pod is None:
            return phase_core.vanished(ctx.stops)
        now = datetime.now(UTC)
        timeout = ctx.config.pending_timeout
        gates = pod_start.scheduling_gates(pod)
        await ctx.show_gates(pod_name, gates)
        ungated_at = conditions.released_at(ctx.status.conditions)
        decided = pod_start.decide(
            pod, container, now=now, timeout=timeout, earlier=shown, ungated_at=ungated_at
        )
        if isinstance(decided, pod_start.Started):
            if shown is not None and before is not None:
                await ctx.report_waiting(before)
            return pod
        ended = phase_core.never_starts(
            pod,
            None if isinstance(decided, pod_start.Waiting) else decided,
            ctx.stops,
            deleted_by_operator=ctx.deleted_by_operator,
        )
        if ended is not None:
            return ended
        assert isinstance(decided, pod_start.Waiting)
        message = pod_start.waiting_message(pod_name, decided)
        if message is not None:
            await ctx.report_waiting(message)
        elif shown is not None and before is not None:
            await ctx.report_waiting(before)  # the trouble is over: say what it said before
        shown = decided.trouble
        left = (decided.deadline - now).total_seconds() if decided.deadline else RECHECK_SECONDS
        await ctx.wait(min(RECHECK_SECONDS, left))


def _running_message(ctx: PhaseContext) -> str | None:
    return next((c.message for c in ctx.status.conditions if c.type == "Running"), None)


async def settle(
    ctx: PhaseContext, pod_name: str, container: str = pods.AGENT_CONTAINER
) -> JsonObject | None:
    """A pod whose main container never started is removed (nothing of it is left to sync),
    unless ``keepPods`` keeps it to show why; any other is left to its harvester's last sync.
    The pod as last seen, if it is there."""
    pod = await ctx.current_pod(pod_name)
    if pod is None:
        return None
    if pod_state.agent_state(pod, container).stage is Stage.WAITING:
        if ctx.spec.keep_pods:
            return pod
        await phase_pod.delete_pod(ctx, pod, grace_seconds=0)
        return None
    return await wait_for_end(ctx, pod_name)


async def wait_for_end(ctx: PhaseContext, pod_name: str) -> JsonObject | None:
    """Until the pod has ended, so its harvester's last sync is done and its final status
    (where the kubelet writes an eviction) is in; None when it is gone. Woken by the pod's
    events; the harvester's last log line is shown in the status after HARVEST_SHOWN_SECONDS,
    then at doubling intervals (a long outage costs a read per TAIL_INTERVAL_MAX, not per
    second)."""
    waited = 0.0
    next_tail, tail_interval = HARVEST_SHOWN_SECONDS, HARVEST_SHOWN_SECONDS
    while True:
        pod = await ctx.current_pod(pod_name)
        if pod is None or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            return pod
        deadline = pod_state.removal_deadline(pod)
        overdue = deadline is not None and datetime.now(UTC) - deadline > HARVEST_GRACE
        if overdue or pod_state.node_lost(pod):
            return pod  # no kubelet is stopping it: its manifest says how far it got
        if waited >= next_tail and ctx.storage is not None:
            line = await ctx.kube.log_tail(ctx.namespace, pod_name, pods.HARVESTER_CONTAINER)
            await ctx.report_waiting(
                f"{pod_name} has finished; waiting for the harvester: {line or 'syncing'}"
            )
            tail_interval = min(tail_interval * 2, TAIL_INTERVAL_MAX)
            next_tail = waited + tail_interval
        started = time.monotonic()
        await ctx.wait(RECHECK_SECONDS)
        waited += time.monotonic() - started


async def stop_when_requested(ctx: PhaseContext, pod_name: str) -> None:
    """Delete the pod once the phase is cancelled or interrupted (R22, R44); ``notify`` sets
    the request before it wakes the runner, so no timer is needed (a thousand runners
    polling every 2 s was 500 wake-ups a second)."""
    await ctx.until_stop_requested()
    pod = await ctx.current_pod(pod_name)
    if pod is not None:
        await phase_pod.delete_pod(ctx, pod, grace_seconds=ctx.config.cancel_grace_seconds)
    ctx.changed.set()


def with_final_status(
    ctx: PhaseContext,
    run: resolution.RunFacts,
    pod: JsonObject,
    container: str = pods.AGENT_CONTAINER,
) -> resolution.RunFacts:
    """The run's facts with what only the pod's final status says (the core decides)."""
    return phase_core.with_final_status(
        run, pod, container, ctx.stops, deleted_by_operator=ctx.deleted_by_operator
    )
