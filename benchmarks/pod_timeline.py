"""Where a scale run's time went, pod by pod, as the benchmark's own watches saw it.

A run's rate is its last owner's end: the last pod's creation, how long the (simulated)
node took to start it, its agent's run, and how long its controller took to say it ended.
Only the first and last are the controller's doing; the second is the node's and the
scheduler's, which share the machine's cores with the operator. Each is printed as
median, p90 and max over the run's pods, so that a slow run shows which part was slow.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The label naming a pod's owner: its Execution for a phase pod, its Job for a Job's pod.
EXECUTION_LABEL = "agentjobs.io/execution"
JOB_LABEL = "batch.kubernetes.io/job-name"


@dataclass
class PodTimes:
    owner: str
    seen: float
    running: float | None = None
    terminated: float | None = None


@dataclass
class Timeline:
    """When each pod was first seen, first running and first terminated, and when each
    owner was first seen finished (monotonic seconds)."""

    owner_label: str
    pods: dict[str, PodTimes] = field(default_factory=dict)
    finished: dict[str, float] = field(default_factory=dict)

    def pod(self, pod: Mapping[str, Any], now: float) -> None:
        meta = pod["metadata"]
        times = self.pods.get(meta["name"])
        if times is None:
            owner = (meta.get("labels") or {}).get(self.owner_label, "")
            times = self.pods[meta["name"]] = PodTimes(owner, now)
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            state = status.get("state") or {}
            if "running" in state and times.running is None:
                times.running = now
            if "terminated" in state and times.terminated is None:
                times.terminated = now

    def owner_finished(self, name: str, now: float) -> None:
        self.finished.setdefault(name, now)

    def intervals(self, started: float) -> dict[str, list[float]]:
        """Seconds, pod by pod: its creation since the first apply; creation → running;
        running → terminated; terminated → its owner finished."""
        made, starting, running, ending = [], [], [], []
        for times in self.pods.values():
            made.append(times.seen - started)
            if times.running is not None:
                starting.append(times.running - times.seen)
                if times.terminated is not None:
                    running.append(times.terminated - times.running)
            finished = self.finished.get(times.owner)
            if times.terminated is not None and finished is not None:
                ending.append(finished - times.terminated)
        return {
            "pod made (since the first apply)": made,
            "made → running (scheduler, node)": starting,
            "running → terminated (the agent)": running,
            "terminated → finished (the controller)": ending,
        }

    def describe(self, started: float) -> str:
        rows = [f"  {name}: {_spread(values)}" for name, values in self.intervals(started).items()]
        return "\n".join(rows)


def _spread(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"median {statistics.median(ordered):.1f} s, p90 {p90:.1f} s, max {ordered[-1]:.1f} s"
