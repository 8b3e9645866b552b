"""Stopping a pod's containers: grace periods, SIGTERM then SIGKILL, evictions.

The kubelet's rules: a grace period only ever shrinks while the pod terminates
(calculateEffectiveGracePeriod, pkg/kubelet/pod_workers.go), a shorter one
restarts the kill from now, and no container gets less than two seconds
(minimumGracePeriodInSeconds, pkg/kubelet/kuberuntime/kuberuntime_manager.go).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from dataclasses import dataclass
from typing import Any

from .podbase import PodWorkerBase
from .status import is_sidecar

Obj = dict[str, Any]

MINIMUM_GRACE_SECONDS = 2.0
DEFAULT_GRACE_SECONDS = 30.0
EVICTED_REASON = "Evicted"  # pkg/kubelet/eviction/helpers.go
TERMINATION_BY_KUBELET = "TerminationByKubelet"


def effective_grace(current: float | None, pod: Obj, override: float | None) -> float:
    """The grace period to kill with: the deletion's or an override's, if shorter."""
    grace = current
    requested = [
        float(value)
        for value in (pod["metadata"].get("deletionGracePeriodSeconds"), override)
        if value is not None
    ]
    for value in requested:
        if grace is None or value < grace:
            grace = value
    if grace is None:
        spec_grace = pod["spec"].get("terminationGracePeriodSeconds")
        grace = float(spec_grace if spec_grace is not None else DEFAULT_GRACE_SECONDS)
    return max(grace, 1.0)


def kill_deadline(now: float, grace: float) -> float:
    return now + max(grace, MINIMUM_GRACE_SECONDS)


@dataclass(frozen=True)
class Eviction:
    message: str
    grace_seconds: float


class TerminatingPodWorker(PodWorkerBase):
    """A pod worker that can stop its containers within a grace period that may shrink."""

    grace: float | None = None
    deadline: float | None = None
    eviction: Eviction | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline_moved = asyncio.Event()

    def update(self, pod: Obj) -> None:
        super().update(pod)
        if self.grace is not None and pod["metadata"].get("deletionTimestamp"):
            self.shorten_grace(None)

    def evict(self, message: str, grace_seconds: float) -> bool:
        """Stop the pod as the eviction manager does: Failed, Evicted, DisruptionTarget.

        False for a pod that is already terminal: the eviction manager only picks active pods.
        """
        if self.record.terminal:
            return False
        self.eviction = Eviction(message, grace_seconds)
        self.ctx.events.record(self.pod, "Warning", EVICTED_REASON, message)
        self.shorten_grace(grace_seconds)
        self.wake.set()
        return True

    def shorten_grace(self, override: float | None) -> None:
        """A running kill restarts with a shorter grace period, counted from now."""
        if self.grace is None or self.deadline is None:
            return
        grace = effective_grace(self.grace, self.pod, override)
        if grace < self.grace:
            self.grace = grace
            self.deadline = min(self.deadline, kill_deadline(time.time(), grace))
            self.deadline_moved.set()

    async def _stop(self, names: list[str]) -> None:
        """SIGTERM, then SIGKILL at the deadline; returns when they have exited."""
        tasks = {n: self.monitors[n] for n in names if n in self.monitors}
        for name in names:
            if name in self.processes:
                self.event("Normal", "Killing", f"Stopping container {name}", name)
                self.processes[name].signal(signal.SIGTERM)
        while tasks and self.deadline is not None:
            self.deadline_moved.clear()
            moved = asyncio.create_task(self.deadline_moved.wait())
            try:
                timeout = max(0.0, self.deadline - time.time())
                await asyncio.wait(
                    [*tasks.values(), moved], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                moved.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await moved
            tasks = {n: t for n, t in tasks.items() if not t.done()}
            if tasks and time.time() >= self.deadline:
                for name in tasks:
                    if name in self.processes:
                        self.processes[name].kill_group()
                await asyncio.wait(tasks.values())
                return

    async def stop_container(self, name: str, grace: float, message: str) -> None:
        """One container, as killContainer does: SIGTERM, then SIGKILL after its grace."""
        process, task = self.processes.get(name), self.monitors.get(name)
        if process is None or task is None:
            return
        self.event("Normal", "Killing", message, name)
        process.signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(task), max(grace, MINIMUM_GRACE_SECONDS))
        except TimeoutError:
            process.kill_group()
            await asyncio.shield(task)

    async def stop_all(self, override: float | None) -> None:
        """Regular (and init) containers first, then sidecars in reverse order."""
        self.grace = effective_grace(self.grace, self.pod, override)
        self.deadline = kill_deadline(time.time(), self.grace)
        init = self.pod["spec"].get("initContainers") or []
        sidecars = [c["name"] for c in init if is_sidecar(c)]
        await self._stop([n for n in self.processes if n not in sidecars])
        for name in reversed(sidecars):
            await self._stop([name])
