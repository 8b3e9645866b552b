"""The node itself: the pod watch and the pod workers (heartbeats live in heartbeat.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
from pathlib import Path
from typing import Any

from . import state as pod_state
from .api import ApiError, KubeApi
from .config import NodeConfig
from .containers import service_environment
from .events import EventRecorder
from .heartbeat import Heartbeat, machine_resources
from .images import ImageTableFiles
from .logrotate import LogRotator
from .pod import NodeContext, PodWorker
from .process import node_cgroup_base, process_start_time
from .streams import StreamPolicy

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class ApiObjectSource:
    """Secrets, config maps and service-account tokens, read with node credentials."""

    def __init__(self, api: KubeApi) -> None:
        self.api = api

    async def get_secret(self, namespace: str, name: str) -> Obj | None:
        return await self.api.get_or_none(f"/api/v1/namespaces/{namespace}/secrets/{name}")

    async def get_config_map(self, namespace: str, name: str) -> Obj | None:
        return await self.api.get_or_none(f"/api/v1/namespaces/{namespace}/configmaps/{name}")

    async def request_token(
        self,
        namespace: str,
        service_account: str,
        audience: str | None,
        expiration_seconds: int,
        pod_name: str,
        pod_uid: str,
    ) -> str:
        spec: Obj = {
            "expirationSeconds": max(expiration_seconds, 600),
            "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid},
        }
        if audience:
            spec["audiences"] = [audience]
        response = await self.api.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
        )
        return str(response["status"]["token"])


class Node:
    def __init__(
        self,
        api: KubeApi,
        name: str,
        address: str,
        port: int,
        state_dir: Path,
        images: ImageTableFiles,
        config: NodeConfig,
    ) -> None:
        self.api = api
        self.name = name
        self.config = config
        state_dir.mkdir(parents=True, exist_ok=True)
        resources = machine_resources(state_dir)
        self.heartbeat = Heartbeat(
            api, name, address, port, resources, config.node_lease_duration_seconds
        )
        self.ctx = NodeContext(
            api=api,
            source=ApiObjectSource(api),
            node_name=name,
            host_ip=address,
            state_dir=state_dir,
            images=images,
            cgroup_base=node_cgroup_base(name),
            allocatable=dict(resources),
            service_env=service_environment(api.host),
            events=EventRecorder(api, name),
            restart_backoff=config.restart_backoff,
            logs=LogRotator(config.container_log_max_size, config.container_log_max_files),
        )
        self.streams = StreamPolicy(config.streaming_connection_idle_timeout)
        self.workers: dict[str, PodWorker] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    # ----- pods -----

    def find_pod(self, namespace: str, name: str) -> PodWorker | None:
        matches = [
            w
            for w in self.workers.values()
            if w.pod["metadata"]["namespace"] == namespace
            and w.pod["metadata"]["name"] == name
            and not w.gone
        ]
        return matches[-1] if matches else None

    def upsert(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        worker = self.workers.get(uid)
        if worker is not None:
            worker.update(pod)
            return
        worker = PodWorker(self.ctx, pod)
        self.workers[uid] = worker
        self.tasks[uid] = asyncio.create_task(self._run_worker(uid, worker))

    async def _run_worker(self, uid: str, worker: PodWorker) -> None:
        try:
            await worker.run()
        except Exception:
            log.exception("pod worker %s crashed", worker.name)
        finally:
            if worker.gone:
                self.workers.pop(uid, None)
                self.tasks.pop(uid, None)

    def remove(self, uid: str) -> None:
        worker = self.workers.get(uid)
        if worker is not None:
            worker.forget()

    def reconcile(self, pods: list[Obj]) -> None:
        """After a (re)list: start or update workers, forget pods that are gone."""
        seen = {p["metadata"]["uid"] for p in pods}
        for pod in pods:
            self.upsert(pod)
        for uid in list(self.workers):
            if uid not in seen:
                self.remove(uid)
        pods_dir = self.ctx.state_dir / "pods"
        if pods_dir.is_dir():
            for directory in pods_dir.iterdir():
                if directory.name not in seen and directory.name not in self.workers:
                    self._discard_orphan(directory)

    def _discard_orphan(self, directory: Path) -> None:
        saved = pod_state.load(directory / "state.json")
        for pid, start_time in saved.processes.values() if saved else []:
            if start_time is not None and process_start_time(int(pid)) == start_time:
                with contextlib.suppress(OSError):
                    os.killpg(int(pid), signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)

    async def watch_pods(self) -> None:
        selector = {"fieldSelector": f"spec.nodeName={self.name}"}
        while True:
            try:
                listing = await self.api.request("GET", "/api/v1/pods", query=selector)
                self.reconcile(listing.get("items") or [])
                version = listing["metadata"]["resourceVersion"]
                while True:
                    version = await self._watch_from(selector, version)
            except _Relist:
                continue
            except (ApiError, OSError, TimeoutError, ValueError) as error:
                log.warning("pod watch failed, relisting: %s", error)
                await asyncio.sleep(1)

    async def _watch_from(self, selector: dict[str, str], version: str) -> str:
        query = {**selector, "resourceVersion": version, "timeoutSeconds": "300"}
        try:
            async for event in self.api.watch("/api/v1/pods", query):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    raise _Relist
                version = obj.get("metadata", {}).get("resourceVersion", version)
                if kind in ("ADDED", "MODIFIED"):
                    self.upsert(obj)
                elif kind == "DELETED":
                    self.remove(obj["metadata"]["uid"])
        except ApiError as error:
            if error.status == 410:
                raise _Relist from error
            raise
        return version

    async def shutdown(self) -> None:
        for task in self.tasks.values():
            task.cancel()
        for task in list(self.tasks.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for worker in self.workers.values():
            await worker.shutdown()
        await self.ctx.events.drain()


class _Relist(Exception):
    """The watch cannot continue from its resourceVersion (410 Gone): list again."""
