"""The part of the kubelet's eviction manager that limits emptyDir volumes.

Every monitoring period the kubelet measures each active pod's volumes and
evicts a pod whose emptyDir uses more than its ``sizeLimit``, with a grace
period of one second, as ``Failed``/``Evicted`` with the message below
(pkg/kubelet/eviction/eviction_manager.go, ``emptyDirLimitEviction``). Usage
is what the files occupy on disk, as the kubelet's ``DiskUsage`` counts it:
allocated blocks of every entry under the volume, on the volume's own
filesystem, links not followed, so a sparse file counts what it allocated.
Node-pressure eviction and ephemeral-storage limits are not modelled.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from .quantity import parse_quantity

Obj = dict[str, Any]
log = logging.getLogger(__name__)

# pkg/kubelet/kubelet.go: the eviction manager's monitoring period.
MONITORING_PERIOD_SECONDS = 10.0
# pkg/kubelet/eviction/eviction_manager.go
IMMEDIATE_EVICTION_GRACE_SECONDS = 1.0
# pkg/kubelet/eviction/helpers.go: emptyDirMessageFmt
EMPTY_DIR_MESSAGE = 'Usage of EmptyDir volume "{volume}" exceeds the limit "{limit}". '
_BLOCK = 512  # st_blocks is in 512-byte units whatever the filesystem's block size


class EvictablePod(Protocol):
    pod: Obj
    volume_paths: dict[str, Path] | None

    def evict(self, message: str, grace_seconds: float) -> bool: ...


def size_limits(pod: Obj) -> dict[str, tuple[str, int]]:
    """Each emptyDir volume with a positive sizeLimit: name → (limit as written, bytes)."""
    limits: dict[str, tuple[str, int]] = {}
    for volume in pod["spec"].get("volumes") or []:
        empty_dir = volume.get("emptyDir")
        if empty_dir is None or empty_dir.get("sizeLimit") is None:
            continue
        written = str(empty_dir["sizeLimit"])
        size = int(parse_quantity(written))
        if size > 0:
            limits[volume["name"]] = (written, size)
    return limits


def disk_usage(root: Path) -> int:
    """Bytes allocated under ``root`` on its own filesystem; vanished entries count 0."""
    try:
        top = os.lstat(root)
    except OSError:
        return 0
    used = top.st_blocks * _BLOCK
    for directory, names, files in os.walk(root, onerror=lambda _: None):
        for name in [*names, *files]:
            try:
                info = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if info.st_dev == top.st_dev:
                used += info.st_blocks * _BLOCK
        names[:] = [n for n in names if not os.path.ismount(os.path.join(directory, n))]
    return used


def over_limit(pod: Obj, volume_paths: Mapping[str, Path]) -> str | None:
    """The eviction message for the first emptyDir over its sizeLimit, else None."""
    for name, (written, size) in size_limits(pod).items():
        path = volume_paths.get(name)
        if path is not None and disk_usage(path) > size:
            return EMPTY_DIR_MESSAGE.format(volume=name, limit=written)
    return None


def measure(workers: Iterable[EvictablePod]) -> list[tuple[EvictablePod, str]]:
    """The pods to evict, each with its message (file system work: run it off the loop)."""
    found: list[tuple[EvictablePod, str]] = []
    for worker in workers:
        if worker.volume_paths is None:
            continue
        try:
            message = over_limit(worker.pod, worker.volume_paths)
        except ValueError as error:  # a sizeLimit the API server let through but we cannot read
            log.warning("cannot read a sizeLimit: %s", error)
            continue
        if message is not None:
            found.append((worker, message))
    return found


async def loop(workers: Mapping[str, EvictablePod], period: float) -> None:
    """Every ``period`` seconds, measure off the event loop and evict on it."""
    while True:
        await asyncio.sleep(period)
        for worker, message in await asyncio.to_thread(measure, list(workers.values())):
            if worker.evict(message, IMMEDIATE_EVICTION_GRACE_SECONDS):
                meta = worker.pod["metadata"]
                log.info("evicted pod %s/%s: %s", meta["namespace"], meta["name"], message)
