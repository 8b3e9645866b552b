"""The node's cgroups: CGROUP_ROOT under every hierarchy in /sys/fs/cgroup, made before the
kubelet starts (it refuses a cgroupRoot that does not exist), and DAEMONS under the cpu
hierarchy, where containerd (with its shims), the kubelet and kube-proxy run; `down` empties
and removes both.

A real node reserves CPU for its runtime. Here the daemons share two cores with the tests,
and containerd 1.6, starved, loses what a container wrote if the container exits before
containerd's reader of its stdout has run ("Failed to pipe stdout ...: reading from a
closed fifo" in its log): a phase whose agent printed its report and exited at once was
read as silent. DAEMONS weighs as several busy processes; the containers themselves go to
their pods' cgroups under CGROUP_ROOT, as on any node.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from devcluster.kubelet.paths import CGROUP_ROOT

CGROUP_MOUNT = Path("/sys/fs/cgroup")
DAEMONS = f"{CGROUP_ROOT}-daemons"
# Eight busy processes' worth: cgroup v1's cpu.shares against 1,024 a process, v2's cpu.weight
# against 100.
DAEMON_CPU_SHARES = 8192
DAEMON_CPU_WEIGHT = 800
# cgroup v1's cpuset starts a child empty, and a cgroup without cpus or mems takes no task.
_CPUSET_INHERITED = ("cpuset.cpus", "cpuset.mems")
KILL_SECONDS = 10.0


def hierarchies(mount: Path = CGROUP_MOUNT) -> list[Path]:
    """Each mounted hierarchy: /sys/fs/cgroup/<controller> under cgroup v1 (cgroup v2's own
    hierarchy, where it is mounted at `mount` itself, is that one)."""
    if (mount / "cgroup.controllers").exists():
        return [mount]
    return sorted(p for p in mount.iterdir() if p.is_dir() and not p.is_symlink())


def _unified(mount: Path) -> bool:
    return (mount / "cgroup.controllers").exists()


def daemons(mount: Path = CGROUP_MOUNT) -> Path | None:
    """Where the daemons' cgroup goes: under the cpu hierarchy (cgroup v2's own, only where
    its root already hands the cpu controller down; enabling it would change the host)."""
    if _unified(mount):
        enabled = (mount / "cgroup.subtree_control").read_text().split()
        return mount / DAEMONS if "cpu" in enabled else None
    cpu = [h for h in hierarchies(mount) if "cpu" in h.name.split(",")]
    return cpu[0] / DAEMONS if cpu else None


def roots(mount: Path = CGROUP_MOUNT) -> list[Path]:
    """Our cgroups where they exist: the node's in each hierarchy, then the daemons'."""
    found = [h / CGROUP_ROOT for h in hierarchies(mount) if (h / CGROUP_ROOT).is_dir()]
    cpu = daemons(mount)
    return [*found, cpu] if cpu is not None and cpu.is_dir() else found


def ensure(mount: Path = CGROUP_MOUNT) -> None:
    for hierarchy in hierarchies(mount):
        root = hierarchy / CGROUP_ROOT
        if root.is_dir():
            continue
        root.mkdir()
        for name in _CPUSET_INHERITED:
            if (root / name).exists():
                (root / name).write_text((hierarchy / name).read_text())
    cpu = daemons(mount)
    if cpu is not None:
        cpu.mkdir(exist_ok=True)
        if _unified(mount):
            (cpu / "cpu.weight").write_text(f"{DAEMON_CPU_WEIGHT}\n")
        else:
            (cpu / "cpu.shares").write_text(f"{DAEMON_CPU_SHARES}\n")


def joined(argv: list[str], mount: Path = CGROUP_MOUNT) -> list[str]:
    """`argv` run in the daemons' cgroup from its first instruction (sh joins it, then execs
    `argv`, so the pid is the program's), with every process it starts."""
    cpu = daemons(mount)
    if cpu is None or not cpu.is_dir():
        return argv
    return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cpu / "cgroup.procs"), *argv]


def _tree(root: Path) -> list[Path]:
    """`root` and every cgroup below it, deepest first."""
    return [Path(directory) for directory, _subdirs, _files in os.walk(root, topdown=False)]


def processes(mount: Path = CGROUP_MOUNT) -> set[int]:
    """The pids in our cgroups: containers left running once containerd and its shims are
    gone."""
    found: set[int] = set()
    for root in roots(mount):
        for cgroup in _tree(root):
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (cgroup / "cgroup.procs").read_text().split())
    return found


def _remove_tree(root: Path) -> None:
    for cgroup in _tree(root):
        # A cgroup whose last task has just died refuses removal for a moment: tried again.
        with contextlib.suppress(OSError):
            cgroup.rmdir()


def kill_processes(mount: Path = CGROUP_MOUNT) -> None:
    """SIGKILL every process in our cgroups until none is left (or KILL_SECONDS pass)."""
    deadline = time.monotonic() + KILL_SECONDS
    while (pids := processes(mount)) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)


def remove(mount: Path = CGROUP_MOUNT) -> None:
    """Empty our cgroups and remove them, deepest first."""
    kill_processes(mount)
    deadline = time.monotonic() + KILL_SECONDS
    while (remaining := roots(mount)) and time.monotonic() < deadline:
        for root in remaining:
            _remove_tree(root)
        if roots(mount):
            time.sleep(0.1)
