"""The node's cgroup, CGROUP_ROOT, under every hierarchy in /sys/fs/cgroup: made before the
kubelet starts (it refuses a cgroupRoot that does not exist), emptied and removed by `down`."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from devcluster.kubelet.paths import CGROUP_ROOT

CGROUP_MOUNT = Path("/sys/fs/cgroup")
# cgroup v1's cpuset starts a child empty, and a cgroup without cpus or mems takes no task.
_CPUSET_INHERITED = ("cpuset.cpus", "cpuset.mems")
KILL_SECONDS = 10.0


def hierarchies(mount: Path = CGROUP_MOUNT) -> list[Path]:
    """Each mounted hierarchy: /sys/fs/cgroup/<controller> under cgroup v1 (cgroup v2's own
    hierarchy, where it is mounted at `mount` itself, is that one)."""
    if (mount / "cgroup.controllers").exists():
        return [mount]
    return sorted(p for p in mount.iterdir() if p.is_dir() and not p.is_symlink())


def roots(mount: Path = CGROUP_MOUNT) -> list[Path]:
    """Our cgroup in each hierarchy where it exists."""
    return [h / CGROUP_ROOT for h in hierarchies(mount) if (h / CGROUP_ROOT).is_dir()]


def ensure(mount: Path = CGROUP_MOUNT) -> None:
    for hierarchy in hierarchies(mount):
        root = hierarchy / CGROUP_ROOT
        if root.is_dir():
            continue
        root.mkdir()
        for name in _CPUSET_INHERITED:
            if (root / name).exists():
                (root / name).write_text((hierarchy / name).read_text())


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
