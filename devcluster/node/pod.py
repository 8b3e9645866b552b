"""The pod worker: runs one pod's containers the way the kubelet's sync loop does.

Each pass of `sync` looks at the pod and what its containers are doing and
takes the next steps (set up volumes, start the next init container, start or
restart regular containers, stop sidecars, finish); process exits, pod
updates and timers wake it for the next pass.
"""

from __future__ import annotations

import asyncio
import calendar
import contextlib
import logging
import secrets
import shutil
import time
from typing import Any

from .api import ApiError
from .containers import build_launch, memory_limit_bytes, pod_label
from .envvars import ContainerConfigError
from .images import ImageNotFoundError, parse_reference
from .logs import LogWriter, log_tail_message
from .podbase import CONFIG_RETRY_SECONDS, NodeContext, log_path
from .probing import ProbingPodWorker
from .process import ContainerProcess, LaunchSpec, MemoryCgroup, StartFailure, spawn
from .records import ContainerRecord, rfc3339
from .status import is_sidecar
from .termination import TERMINATION_BY_KUBELET
from .volumes import VolumeError, prepare_volumes

__all__ = ["NodeContext", "PodWorker", "log_path"]

Obj = dict[str, Any]
log = logging.getLogger(__name__)

DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"
MAX_BACKOFF_SECONDS = 300.0


class PodWorker(ProbingPodWorker):
    """Runs one pod; `run` is its task for as long as the pod is bound to this node."""

    async def run(self) -> None:
        writer = asyncio.create_task(self._status_loop())
        try:
            while not self.gone:
                self.next_wake = None
                if not self.done:
                    try:
                        await self.sync()
                    except (ApiError, OSError, ValueError, KeyError) as error:
                        log.warning("pod %s: sync failed: %s", self.name, error)
                        self.wake_at(time.time() + CONFIG_RETRY_SECONDS)
                if self.gone:
                    break
                timeout = None if self.next_wake is None else max(0, self.next_wake - time.time())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout)
                self.wake.clear()
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            if self.gone:
                await self._cleanup()

    async def _cleanup(self) -> None:
        for name in list(self.monitors):
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.monitors[name]), 5)
        # Off the loop: a pod dir of 100,000 files takes seconds to remove, and the lease
        # renewals would wait for it until the node is tainted unreachable.
        await asyncio.to_thread(shutil.rmtree, self.dir, ignore_errors=True)

    async def shutdown(self) -> None:
        """The node is stopping: kill containers but keep state for the next start."""
        for process in self.processes.values():
            process.kill_group()
        for task in list(self.monitors.values()):
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), 5)

    # ----- the sync pass -----

    def _restart_policy(self) -> str:
        return str(self.pod["spec"].get("restartPolicy") or "Always")

    def _active_deadline(self) -> float | None:
        seconds = self.pod["spec"].get("activeDeadlineSeconds")
        start = self.record.start_time
        if seconds is None or start is None:
            return None
        return calendar.timegm(time.strptime(start, "%Y-%m-%dT%H:%M:%SZ")) + int(seconds)

    async def sync(self) -> None:
        meta = self.pod["metadata"]
        now = time.time()
        if self.record.start_time is None:
            self.record.start_time = rfc3339(now)
            self.mark_dirty()
        if meta.get("deletionTimestamp"):
            # Stop, write the final status, then remove the pod (pkg/kubelet/kubelet.go
            # syncTerminatingPod, then the status manager's delete in status_manager.go).
            if not self.record.terminal:
                await self.finish(None)
            await self.flush_status()
            await self.delete_pod()
            return
        if self.record.terminal:
            return
        if self.eviction is not None:
            # The eviction manager's kill sets Failed/Evicted and DisruptionTarget
            # (evictPod, pkg/kubelet/eviction/eviction_manager.go).
            self.record.reason, self.record.message = "Evicted", self.eviction.message
            self.record.disruption = [TERMINATION_BY_KUBELET, self.eviction.message]
            await self.finish(self.eviction.grace_seconds)
            return
        deadline = self._active_deadline()
        if deadline is not None and now >= deadline:
            self.record.reason, self.record.message = "DeadlineExceeded", DEADLINE_MESSAGE
            await self.finish(None)
            return
        if deadline is not None:
            self.wake_at(deadline)
        if self.volume_paths is None or not self.record.sandbox_ready:
            try:
                self.volume_paths = await prepare_volumes(
                    self.pod,
                    self.ctx.source,
                    self.dir / "volumes",
                    self.ctx.host_ip,
                    self.ctx.allocatable,
                )
            except VolumeError as error:
                log.info("pod %s: %s", self.name, error)
                self.wake_at(now + CONFIG_RETRY_SECONDS)
                return
            self.record.sandbox_ready = True
            self.mark_dirty()
        if await self.sync_liveness():
            return
        if self._regular_containers_finished():
            await self.finish(None)  # (sidecars are not restarted for nothing)
            return
        if not await self._sync_init_containers():
            return
        await self._sync_regular_containers()

    async def _sync_init_containers(self) -> bool:
        """Advance init containers; True once all are done (sidecars started)."""
        initialized = any(r.has_run for r in self.record.containers)
        for container in self.pod["spec"].get("initContainers") or []:
            record = self._record(container)
            if is_sidecar(container):
                started = record.state == "running" or await self.try_start(container, record)
                if not started and not initialized:
                    return False
                continue
            if initialized or (record.state == "terminated" and record.exit_code == 0):
                continue
            if record.state == "running":
                return False
            if record.has_run and self._restart_policy() == "Never":
                await self.finish(None)
                return False
            await self.try_start(container, record)
            return False
        return True

    def _regular_containers_finished(self) -> bool:
        """Every regular container ran and none is running or due for a restart."""
        records = [self._record(c) for c in self.pod["spec"].get("containers") or []]
        return all(
            r.state != "running" and r.has_run and not self._should_restart(r) for r in records
        )

    async def _sync_regular_containers(self) -> None:
        for container in self.pod["spec"].get("containers") or []:
            record = self._record(container)
            if record.state != "running" and (not record.has_run or self._should_restart(record)):
                await self.try_start(container, record)
        if self._regular_containers_finished():
            await self.finish(None)

    def _should_restart(self, record: ContainerRecord) -> bool:
        policy = self._restart_policy()
        return policy == "Always" or (policy == "OnFailure" and record.last_exit_code != 0)

    def _record(self, container: Obj) -> ContainerRecord:
        record = self.record.find(container["name"])
        if record is None:
            record = ContainerRecord(name=container["name"], image=container.get("image", ""))
            self.record.containers.append(record)
        return record

    # ----- starting containers -----

    def _back_off(self, name: str) -> float:
        delay = self.delays.get(name, self.ctx.restart_backoff)
        self.delays[name] = min(delay * 2, MAX_BACKOFF_SECONDS)
        self.retry_at[name] = time.time() + delay
        return delay

    async def try_start(self, container: Obj, record: ContainerRecord) -> bool:
        """Start the container if nothing prevents it now; True when it runs."""
        name, now = container["name"], time.time()
        if now < self.retry_at.get(name, 0.0):
            if record.state == "terminated":
                delay = self.delays.get(name, self.ctx.restart_backoff) / 2
                record.set_waiting(
                    "CrashLoopBackOff",
                    f"back-off {int(delay)}s restarting failed container={name} "
                    f"pod={pod_label(self.pod)}",
                )
                self.event(
                    "Warning",
                    "BackOff",
                    f"Back-off restarting failed container {name} in pod {pod_label(self.pod)}",
                    name,
                )
                self.mark_dirty()
            self.wake_at(self.retry_at[name])
            return False
        reference = str(container.get("image", ""))
        try:
            image = self.ctx.images.lookup(reference)
        except ImageNotFoundError:
            self._image_missing(record, reference, now)
            return False
        record.image = parse_reference(reference).display
        record.image_id = image.image_id
        try:
            launch = await build_launch(
                self.pod,
                container,
                image,
                self.ctx.source,
                self.volume_paths or {},
                self.ctx.host_ip,
                self.ctx.allocatable,
                self.ctx.service_env,
                pod_ip=self.pod_ip,
            )
        except ContainerConfigError as error:
            if (record.state, record.waiting_reason, record.waiting_message) != (
                "waiting",
                "CreateContainerConfigError",
                str(error),
            ):
                record.set_waiting("CreateContainerConfigError", str(error))
                self.event("Warning", "Failed", f"Error: {error}", name)
                self.mark_dirty()
            self.wake_at(now + CONFIG_RETRY_SECONDS)
            return False
        self.event(
            "Normal", "Pulled", f'Container image "{reference}" already present on machine', name
        )
        return await self._spawn(container, record, launch)

    def _image_missing(self, record: ContainerRecord, reference: str, now: float) -> None:
        files = ", ".join(str(p) for p in self.ctx.images.paths)
        retry_at = self.pull_retry_at.get(record.name, 0.0)
        if now >= retry_at:
            display = parse_reference(reference).display
            record.set_waiting(
                "ErrImagePull",
                f'failed to pull image "{reference}": image '
                f'"{display}" is not in the devcluster image table ({files})',
            )
            delay = self.delays.get("pull:" + record.name, self.ctx.restart_backoff)
            self.delays["pull:" + record.name] = min(delay * 2, MAX_BACKOFF_SECONDS)
            self.pull_retry_at[record.name] = now + delay
            self.wake_at(now + 1.0)  # show ImagePullBackOff shortly, as the kubelet does
            self.event("Warning", "Failed", f"Error: {record.waiting_message}", record.name)
        else:
            if record.waiting_reason != "ImagePullBackOff":
                record.set_waiting("ImagePullBackOff", f'Back-off pulling image "{reference}"')
                self.event(
                    "Normal", "BackOff", f'Back-off pulling image "{reference}"', record.name
                )
            self.wake_at(retry_at)
        self.mark_dirty()

    async def _spawn(self, container: Obj, record: ContainerRecord, launch: LaunchSpec) -> bool:
        name = container["name"]
        record.instances += 1
        record.restart_count = record.instances - 1
        container_id = "process://" + secrets.token_hex(32)
        writer = LogWriter(log_path(self.dir, name, record.instances - 1))
        self.ctx.live_logs[str(writer.path)] = writer.live
        self.ctx.logs.register(
            writer, self.pod["metadata"]["namespace"], self.pod["metadata"]["name"]
        )
        cgroup = self._memory_cgroup(container, record)
        launch.cgroup_procs = cgroup.procs_file if cgroup is not None else None
        spec_path = self.dir / "launch" / f"{name}.json"
        try:
            process = await spawn(launch, spec_path, writer, cgroup)
        except StartFailure as error:
            record.container_id = container_id
            record.set_running(container_id, "1970-01-01T00:00:00Z")
            record.set_terminated(128, "StartError", str(error), rfc3339(time.time()))
            self._after_exit(name, writer, cgroup)
            self._back_off(name)
            self.event("Warning", "Failed", f"Error: {error}", name)
            self.wake.set()
            return False
        record.set_running(container_id, rfc3339(time.time()))
        self.event("Normal", "Created", f"Created container: {name}", name)
        self.event("Normal", "Started", f"Started container {name}", name)
        self.processes[name] = process
        self.monitors[name] = asyncio.create_task(self._monitor(name, record, process, writer))
        self.start_probes(container, record)
        self.mark_dirty()
        self._save()
        return True

    def _memory_cgroup(self, container: Obj, record: ContainerRecord) -> MemoryCgroup | None:
        limit = memory_limit_bytes(container)
        if limit is None or self.ctx.cgroup_base is None:
            return None
        try:
            return MemoryCgroup(
                self.ctx.cgroup_base / f"{self.uid}-{record.name}-{record.instances}", limit
            )
        except OSError as error:
            log.warning("pod %s: no memory cgroup for %s: %s", self.name, record.name, error)
            return None

    async def _monitor(
        self, name: str, record: ContainerRecord, process: ContainerProcess, writer: LogWriter
    ) -> None:
        code = await process.wait()
        oom = process.cgroup is not None and process.cgroup.oom_killed()
        reason = "OOMKilled" if oom else ("Completed" if code == 0 else "Error")
        message = log_tail_message(writer.path) if code != 0 and self._logs_on_error(name) else None
        record.set_terminated(code, reason, message, rfc3339(time.time()))
        self._after_exit(name, writer, process.cgroup)
        self.processes.pop(name, None)
        self.monitors.pop(name, None)
        if code != 0 or self._restart_policy() == "Always":
            self._back_off(name)
        self._save()
        self.mark_dirty()
        self.wake.set()

    def _logs_on_error(self, name: str) -> bool:
        spec = self.pod["spec"]
        containers = (spec.get("initContainers") or []) + (spec.get("containers") or [])
        return any(
            c["name"] == name and c.get("terminationMessagePolicy") == "FallbackToLogsOnError"
            for c in containers
        )

    def _after_exit(self, name: str, writer: LogWriter, cgroup: MemoryCgroup | None) -> None:
        writer.close()
        self.ctx.logs.unregister(writer)
        self.ctx.live_logs.pop(str(writer.path), None)
        if cgroup is not None:
            cgroup.kill_all()
            cgroup.remove()
