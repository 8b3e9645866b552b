"""State every pod worker keeps, and how it is reported: status writes, disk, deletion."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import state as pod_state
from .api import MERGE_PATCH, ApiError, KubeApi
from .events import EventRecorder
from .images import ImageTableFiles
from .logrotate import LogRotator
from .logs import LiveLog
from .network import pod_ip
from .process import ContainerProcess, process_start_time
from .records import mark_lost, record_for_pod, rfc3339
from .status import pod_status
from .volumes import VolumeSource

Obj = dict[str, Any]
log = logging.getLogger(__name__)

CONFIG_RETRY_SECONDS = 2.0


@dataclass
class NodeContext:
    """What every pod worker shares."""

    api: KubeApi
    source: VolumeSource
    node_name: str
    host_ip: str
    state_dir: Path
    images: ImageTableFiles
    cgroup_base: Path | None
    allocatable: dict[str, str]
    service_env: dict[str, str]
    events: EventRecorder
    logs: LogRotator
    restart_backoff: float = 10.0
    live_logs: dict[str, LiveLog] = field(default_factory=dict)


def _readiness(status: Obj) -> dict[str, str]:
    kinds = ("Ready", "ContainersReady")
    return {c["type"]: c["status"] for c in status.get("conditions") or [] if c["type"] in kinds}


def log_path(pod_dir: Path, container: str, instance: int) -> Path:
    return pod_dir / "logs" / container / f"{instance}.log"


class PodWorkerBase:
    """A pod's record and processes, and the writing of its status to the API."""

    def __init__(self, ctx: NodeContext, pod: Obj) -> None:
        self.ctx = ctx
        self.pod = pod
        self.uid: str = pod["metadata"]["uid"]
        self.pod_ip = pod_ip(pod, ctx.host_ip)
        self.dir = ctx.state_dir / "pods" / self.uid
        saved = pod_state.load(self.dir / "state.json")
        self.record = saved.record if saved is not None else record_for_pod(pod)
        if saved is not None:
            self._reap_lost(saved.processes)
        self.processes: dict[str, ContainerProcess] = {}
        self.monitors: dict[str, asyncio.Task[None]] = {}
        self.retry_at: dict[str, float] = {}
        self.delays: dict[str, float] = {}
        self.pull_retry_at: dict[str, float] = {}
        self.volume_paths: dict[str, Path] | None = None
        self.wake = asyncio.Event()
        self.status_dirty = asyncio.Event()
        self.status_dirty.set()
        self.status_lock = asyncio.Lock()
        self.next_wake: float | None = None
        self.done = False
        self.gone = False
        self._last_written: Obj | None = None

    # ----- bookkeeping -----

    def _reap_lost(self, processes: dict[str, list[Any]]) -> None:
        """After a node restart: kill leftovers of containers we were running."""
        for name, (pid, start_time) in processes.items():
            if start_time is not None and process_start_time(int(pid)) == start_time:
                with contextlib.suppress(OSError):
                    os.killpg(int(pid), signal.SIGKILL)
            record = self.record.find(name)
            if record is not None and record.state == "running":
                mark_lost(record)
        for record in self.record.all_records():
            if record.state == "running":
                mark_lost(record)
        self.record.sandbox_ready = False

    def update(self, pod: Obj) -> None:
        self.pod = pod
        if self._last_written is not None and _readiness(pod.get("status") or {}) != _readiness(
            self._last_written
        ):
            # Someone else (the node lifecycle controller's MarkPodsNotReady) changed our
            # conditions: write ours again, as the status manager's reconcile does
            # (needsReconcile, pkg/kubelet/status/status_manager.go).
            self._last_written = None
            self.mark_dirty()
        self.wake.set()

    def forget(self) -> None:
        """The pod is gone from the API: stop at once and drop its files."""
        self.gone = True
        for process in self.processes.values():
            process.kill_group()
        self.wake.set()

    def wake_at(self, moment: float) -> None:
        if self.next_wake is None or moment < self.next_wake:
            self.next_wake = moment

    def event(self, kind: str, reason: str, message: str, container: str) -> None:
        init = any(c["name"] == container for c in self.pod["spec"].get("initContainers") or [])
        self.ctx.events.record(self.pod, kind, reason, message, container, init)

    def mark_dirty(self) -> None:
        self.status_dirty.set()

    @property
    def name(self) -> str:
        meta = self.pod["metadata"]
        return f"{meta['namespace']}/{meta['name']}"

    # ----- status -----

    def _save(self) -> None:
        meta = self.pod["metadata"]
        processes = {n: [p.pid, p.start_time] for n, p in self.processes.items()}
        with contextlib.suppress(OSError):
            pod_state.save(
                self.dir / "state.json",
                pod_state.PodState(meta["namespace"], meta["name"], self.record, processes),
            )

    async def _status_loop(self) -> None:
        while True:
            await self.status_dirty.wait()
            self.status_dirty.clear()
            try:
                await self.flush_status()
            except (ApiError, OSError) as error:
                log.warning("pod %s: status update failed: %s", self.name, error)
                status = error.status if isinstance(error, ApiError) else 0
                if status in (0, 429) or status >= 500:  # worth retrying; a 4xx is not
                    await asyncio.sleep(1)
                    self.mark_dirty()
            await asyncio.sleep(0.05)  # coalesce bursts of changes into one write

    async def flush_status(self) -> None:
        async with self.status_lock:
            previous = (self._last_written or {}).get("phase")
            status = pod_status(
                self.pod,
                self.record,
                self.ctx.host_ip,
                rfc3339(time.time()),
                previous,
                pod_ip=self.pod_ip,
            )
            self._save()
            if status == self._last_written:
                return
            meta = self.pod["metadata"]
            try:
                await self.ctx.api.request(
                    "PATCH",
                    f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                    body={"metadata": {"uid": self.uid}, "status": status},
                    content_type=MERGE_PATCH,
                )
            except ApiError as error:
                if error.status in (404, 409):
                    return  # the pod is gone (or replaced by another with the same name)
                raise
            self._last_written = status

    async def delete_pod(self) -> None:
        meta = self.pod["metadata"]
        try:
            await self.ctx.api.request(
                "DELETE",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                body={
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": self.uid},
                },
            )
        except ApiError as error:
            if error.status not in (404, 409):
                raise
        self.done = True
