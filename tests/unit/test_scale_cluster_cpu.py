"""The cluster's processes' CPU during a scale run (benchmarks/cluster_cpu.py).

Cases:
- a live process's CPU seconds are read from /proc; a pid that is gone reads 0;
- a component counts only while its pid file names that very process (start time too);
- the description gives each component's CPU between two readings in ms each, most first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from benchmarks.cluster_cpu import cluster_cpu, describe, process_cpu_seconds
from devcluster.layout import Layout


def _spin() -> None:
    deadline = sum(os.times()[:2]) + 0.2
    while sum(os.times()[:2]) < deadline:
        pass


def test_a_live_process_reads_its_cpu_and_a_gone_one_zero() -> None:
    before = process_cpu_seconds(os.getpid())
    _spin()
    assert process_cpu_seconds(os.getpid()) >= before + 0.1
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert process_cpu_seconds(int(gone.stdout)) == 0.0


def _start_time(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def test_a_component_counts_only_when_its_pid_file_names_that_process(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    (tmp_path / "run").mkdir()
    me = os.getpid()
    layout.pid_file("etcd").write_text(json.dumps({"pid": me, "start_time": _start_time(me)}))
    stale = {"pid": me, "start_time": _start_time(me) + 1}  # a reused pid
    layout.pid_file("kwok").write_text(json.dumps(stale))

    seconds = cluster_cpu(layout)

    assert set(seconds) == {"etcd"}
    assert seconds["etcd"] > 0


def test_the_description_is_each_components_share_most_first() -> None:
    before = Counter({"etcd": 10.0, "kube-apiserver": 100.0})
    after = Counter({"etcd": 25.0, "kube-apiserver": 176.5})

    line = describe(before, after, 1000)

    assert line == "  cluster CPU, ms each: kube-apiserver 76.5, etcd 15.0 (total 91.5)"
