"""The CPU seconds each of the local cluster's processes spent during a run.

On a two-core machine the operator shares the cores with the API server, etcd, the
scheduler and the simulated nodes (kwok, and kwok-logs, which serves their logs). A run's
rate depends on all of them: the API server's work for each Execution is part of what an
Execution costs, as the controller-manager's is part of what a Job costs.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from devcluster.layout import Layout
from devcluster.processes import alive

COMPONENTS = (
    "kube-apiserver",
    "etcd",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "kwok-logs",
)


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU time so far of process `pid` (0 when it has gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def cluster_cpu(layout: Layout) -> Counter[str]:
    """CPU seconds so far of each running component of `COMPONENTS`, by name."""
    seconds: Counter[str] = Counter()
    for component in COMPONENTS:
        pid = alive(layout.pid_file(component))
        if pid is not None:
            seconds[component] = process_cpu_seconds(pid)
    return seconds


def describe(before: Counter[str], after: Counter[str], count: int) -> str:
    """The components' CPU between two readings, most first, in ms for each of `count`."""
    spent = {name: after[name] - before[name] for name in after}
    rows = ", ".join(
        f"{name} {1000 * value / count:.1f}"
        for name, value in sorted(spent.items(), key=lambda item: -item[1])
    )
    return f"  cluster CPU, ms each: {rows} (total {1000 * sum(spent.values()) / count:.1f})"
