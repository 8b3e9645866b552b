"""A pod worker's probe workers, and the kills that failed liveness probes ask for.

One task per probe and container instance runs the kubelet's doProbe loop
(pkg/kubelet/prober/worker.go): the first probe at once, then one every
periodSeconds, none before initialDelaySeconds, results counted against the
thresholds. Readiness sets the container's `ready`; a liveness failure is handed
to the next sync pass, which kills as computePodActions does (see probes.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from .probes import (
    LIVENESS,
    READINESS,
    Probe,
    Thresholds,
    container_probes,
    kill_grace,
    liveness_kill,
    run_probe,
)
from .records import ContainerRecord
from .termination import TerminatingPodWorker

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class ProbingPodWorker(TerminatingPodWorker):
    """A pod worker that probes its containers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.probe_tasks: dict[str, list[asyncio.Task[None]]] = {}
        self.liveness_failures: dict[str, Probe] = {}
        self.container_kills: dict[str, asyncio.Task[None]] = {}

    def start_probes(self, container: Obj, record: ContainerRecord) -> None:
        """Probe a container instance that has just started."""
        name = container["name"]
        for task in self.probe_tasks.pop(name, []):
            task.cancel()
        probes, skipped = container_probes(container)
        for reason in skipped:
            log.warning("pod %s: container %s: %s", self.name, name, reason)
        # The readiness probe's initial result is failure (worker.go initialValue).
        record.ready = False if any(p.kind == READINESS for p in probes) else None
        started, instance = time.time(), record.instances
        self.probe_tasks[name] = [
            asyncio.create_task(self._probe_loop(probe, name, record, instance, started))
            for probe in probes
        ]

    async def _probe_loop(
        self, probe: Probe, name: str, record: ContainerRecord, instance: int, started: float
    ) -> None:
        thresholds = Thresholds(probe)
        while await self._probe_once(probe, thresholds, name, record, instance, started):
            await asyncio.sleep(probe.period)

    async def _probe_once(
        self,
        probe: Probe,
        thresholds: Thresholds,
        name: str,
        record: ContainerRecord,
        instance: int,
        started: float,
    ) -> bool:
        """One doProbe; False when this instance is not probed any more."""

        def current() -> bool:
            return record.instances == instance and record.state == "running"

        if self.gone or self.record.terminal or not current():
            return False
        if probe.kind == LIVENESS and self.pod["metadata"].get("deletionTimestamp"):
            return False  # a pod shutting down is not killed for its liveness
        if int(time.time() - started) < probe.initial_delay:
            return True
        ok, output = await run_probe(probe, self.pod_ip)
        if not current():
            return False
        if not ok:
            self.event("Warning", "Unhealthy", f"{probe.kind} probe failed: {output}", name)
        if not thresholds.settle(ok):
            return True
        if probe.kind == READINESS:
            if record.ready != ok:
                record.ready = ok
                self.mark_dirty()
            return True
        if ok:
            return True
        self.liveness_failures[name] = probe
        self.wake.set()
        return False  # on hold until a new instance of the container

    async def sync_liveness(self) -> bool:
        """Kill what failed its liveness probe; True when that ended the whole pod."""
        by_name = {r.name: r for r in self.record.all_records()}
        for name, probe in list(self.liveness_failures.items()):
            del self.liveness_failures[name]
            record = by_name.get(name)
            if record is None or record.state != "running" or name in self.container_kills:
                continue
            plan = liveness_kill(self.pod, by_name, name)
            if plan.whole_pod:
                # KillPod: every container with the pod's grace, the probe's is not used.
                self.liveness_failures.clear()
                await self.finish(None)
                return True
            message = f"Container {name} failed liveness probe"
            if plan.restart:
                message += ", will be restarted"
            grace = kill_grace(self.pod, probe)
            self.container_kills[name] = asyncio.create_task(self._kill(name, grace, message))
        return False

    async def _kill(self, name: str, grace: float, message: str) -> None:
        try:
            await self.stop_container(name, grace, message)
        finally:
            self.container_kills.pop(name, None)
            self.wake.set()

    async def finish(self, grace_override: float | None) -> None:
        """The pod is done (or must stop): stop what runs, then it is terminal."""
        await self.stop_all(grace_override)
        self.record.terminal = True
        self.record.sandbox_ready = False
        self.mark_dirty()
