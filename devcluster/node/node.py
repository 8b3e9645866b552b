"""The node itself: registration, heartbeats, the pod watch and the pod workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import platform
import shutil
import signal
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import state as pod_state
from .api import MERGE_PATCH, ApiError, KubeApi
from .containers import service_environment
from .events import EventRecorder
from .images import ImageTableFiles
from .pod import NodeContext, PodWorker
from .process import node_cgroup_base, process_start_time

Obj = dict[str, Any]
log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
LEASE_RENEW_SECONDS = 10.0
NODE_STATUS_SECONDS = 60.0
MAX_PODS = "110"
RUNTIME_VERSION = "process://0.1.0"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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


def machine_resources(state_dir: Path) -> dict[str, str]:
    memory_kib = 0
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    disk = shutil.disk_usage(state_dir)
    return {
        "cpu": str(os.cpu_count() or 1),
        "memory": f"{memory_kib}Ki",
        "pods": MAX_PODS,
        "ephemeral-storage": f"{disk.total // 1024}Ki",
    }


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


class Node:
    def __init__(
        self,
        api: KubeApi,
        name: str,
        address: str,
        port: int,
        state_dir: Path,
        images: ImageTableFiles,
        restart_backoff: float,
    ) -> None:
        self.api = api
        self.name = name
        self.address = address
        self.port = port
        state_dir.mkdir(parents=True, exist_ok=True)
        self.resources = machine_resources(state_dir)
        self.ctx = NodeContext(
            api=api,
            source=ApiObjectSource(api),
            node_name=name,
            host_ip=address,
            state_dir=state_dir,
            images=images,
            cgroup_base=node_cgroup_base(name),
            allocatable=dict(self.resources),
            service_env=service_environment(api.host),
            events=EventRecorder(api, name),
            restart_backoff=restart_backoff,
        )
        self.workers: dict[str, PodWorker] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self._transitions: dict[str, str] = {}
        self._node_uid = ""
        self._kubelet_version = "v0.0.0"

    # ----- registration and heartbeats -----

    async def register(self) -> None:
        with contextlib.suppress(ApiError):
            version = await self.api.request("GET", "/version")
            self._kubelet_version = str(version.get("gitVersion") or self._kubelet_version)
        existing = await self.api.get_or_none(f"/api/v1/nodes/{self.name}")
        if existing is None:
            labels = {
                "kubernetes.io/hostname": self.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
            }
            existing = await self.api.request(
                "POST",
                "/api/v1/nodes",
                body={
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": self.name, "labels": labels},
                },
            )
        self._node_uid = existing["metadata"]["uid"]
        for condition in (existing.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "Ready" and condition.get("status") == "True":
                self._transitions["Ready"] = condition.get("lastTransitionTime") or ""
        await self.post_status()

    def node_status(self) -> Obj:
        heartbeat = now_rfc3339()
        conditions = []
        for kind, status, reason, message in (
            (
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            (
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ):
            transition = self._transitions.setdefault(kind, heartbeat)
            conditions.append(
                {
                    "type": kind,
                    "status": status,
                    "lastHeartbeatTime": heartbeat,
                    "lastTransitionTime": transition,
                    "reason": reason,
                    "message": message,
                }
            )
        uname = platform.uname()
        os_release = {
            k: v.strip('"')
            for k, _, v in (line.partition("=") for line in _read("/etc/os-release").splitlines())
        }
        return {
            "capacity": self.resources,
            "allocatable": self.resources,
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": self.address},
                {"type": "Hostname", "address": self.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "nodeInfo": {
                "machineID": _read("/etc/machine-id")
                or uuid.uuid5(uuid.NAMESPACE_DNS, self.name).hex,
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_DNS, self.name)),
                "bootID": _read("/proc/sys/kernel/random/boot_id"),
                "kernelVersion": uname.release,
                "osImage": os_release.get("PRETTY_NAME", "Linux"),
                "containerRuntimeVersion": RUNTIME_VERSION,
                "kubeletVersion": self._kubelet_version,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }

    async def post_status(self) -> None:
        await self.api.request(
            "PATCH",
            f"/api/v1/nodes/{self.name}/status",
            body={"status": self.node_status()},
            content_type=MERGE_PATCH,
        )

    async def renew_lease(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{self.name}"
        lease = await self.api.get_or_none(path)
        spec = {
            "holderIdentity": self.name,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": micro_time(),
        }
        if lease is None:
            await self.api.request(
                "POST",
                f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases",
                body={
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "name": self.name,
                        "namespace": LEASE_NAMESPACE,
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "Node",
                                "name": self.name,
                                "uid": self._node_uid,
                            }
                        ],
                    },
                    "spec": spec,
                },
            )
        else:
            lease["spec"] = {**(lease.get("spec") or {}), **spec}
            await self.api.request("PUT", path, body=lease)

    async def heartbeat_loop(self) -> None:
        last_status = time.monotonic()
        while True:
            try:
                await self.renew_lease()
                if time.monotonic() - last_status >= NODE_STATUS_SECONDS:
                    await self.post_status()
                    last_status = time.monotonic()
            except ApiError as error:
                log.warning("heartbeat failed: %s", error)
                if error.status == 404:  # the Node was deleted: register again, as a kubelet
                    with contextlib.suppress(ApiError):
                        await self.register()
            except OSError as error:
                log.warning("heartbeat failed: %s", error)
            await asyncio.sleep(LEASE_RENEW_SECONDS)

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
