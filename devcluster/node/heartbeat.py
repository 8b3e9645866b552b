"""The node's registration and heartbeats: its Node object, NodeStatus and Lease.

Heartbeats can be paused (a test knob), so that kube-controller-manager's node
lifecycle controller sees a node that stopped posting and marks it Ready=Unknown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import platform
import shutil
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .api import MERGE_PATCH, ApiError, KubeApi

Obj = dict[str, Any]
log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-node-lease"
DEFAULT_LEASE_DURATION_SECONDS = 40  # the kubelet's nodeLeaseDurationSeconds default
# pkg/kubelet/kubelet.go renews the lease every quarter of its duration.
LEASE_RENEW_FRACTION = 0.25
NODE_STATUS_SECONDS = 60.0
MAX_PODS = "110"
RUNTIME_VERSION = "process://0.1.0"

CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)  # fmt: skip


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_time() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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


def node_conditions(current: list[Obj], now: str) -> list[Obj]:
    """The node's conditions; a transition time moves only when the status changes.

    Compared with what the API holds, as the kubelet's setters do
    (pkg/kubelet/nodestatus/setters.go), so Ready after the node controller's
    Unknown gets a fresh lastTransitionTime.
    """
    by_type = {c.get("type"): c for c in current}
    conditions = []
    for kind, status, reason, message in CONDITIONS:
        seen = by_type.get(kind) or {}
        same = seen.get("status") == status and seen.get("lastTransitionTime")
        conditions.append(
            {
                "type": kind,
                "status": status,
                "lastHeartbeatTime": now,
                "lastTransitionTime": seen["lastTransitionTime"] if same else now,
                "reason": reason,
                "message": message,
            }
        )
    return conditions


class Heartbeat:
    """Registers the Node and keeps its Lease and status fresh, unless paused."""

    def __init__(
        self,
        api: KubeApi,
        name: str,
        address: str,
        port: int,
        resources: dict[str, str],
        lease_duration_seconds: int = DEFAULT_LEASE_DURATION_SECONDS,
    ) -> None:
        self.api = api
        self.name = name
        self.address = address
        self.port = port
        self.resources = resources
        self.lease_duration_seconds = lease_duration_seconds
        self.paused = False
        self._changed = asyncio.Event()
        self._node_uid = ""
        self._kubelet_version = "v0.0.0"

    def pause(self) -> None:
        self.paused = True
        self._changed.set()

    def resume(self) -> None:
        self.paused = False
        self._changed.set()

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
        await self.post_status()

    def node_status(self, current_conditions: list[Obj]) -> Obj:
        uname = platform.uname()
        os_release = {
            k: v.strip('"')
            for k, _, v in (line.partition("=") for line in _read("/etc/os-release").splitlines())
        }
        return {
            "capacity": self.resources,
            "allocatable": self.resources,
            "conditions": node_conditions(current_conditions, now_rfc3339()),
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
        path = f"/api/v1/nodes/{self.name}"
        current = await self.api.get_or_none(path) or {}
        conditions = (current.get("status") or {}).get("conditions") or []
        await self.api.request(
            "PATCH",
            f"{path}/status",
            body={"status": self.node_status(conditions)},
            content_type=MERGE_PATCH,
        )

    async def renew_lease(self) -> None:
        path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{self.name}"
        lease = await self.api.get_or_none(path)
        spec = {
            "holderIdentity": self.name,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "renewTime": micro_time(),
        }
        if lease is None:
            owner = {"apiVersion": "v1", "kind": "Node", "name": self.name, "uid": self._node_uid}
            await self.api.request(
                "POST",
                f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases",
                body={
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "name": self.name,
                        "namespace": LEASE_NAMESPACE,
                        "ownerReferences": [owner],
                    },
                    "spec": spec,
                },
            )
        else:
            lease["spec"] = {**(lease.get("spec") or {}), **spec}
            await self.api.request("PUT", path, body=lease)

    async def loop(self) -> None:
        renew_seconds = self.lease_duration_seconds * LEASE_RENEW_FRACTION
        last_status = time.monotonic()
        while True:
            if self.paused:
                await self._until_changed(None)
                last_status = -NODE_STATUS_SECONDS  # resumed: post Ready at once
                continue
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
            await self._until_changed(renew_seconds)

    async def _until_changed(self, timeout: float | None) -> None:
        """Sleep until the next beat, or until paused or resumed."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)
        self._changed.clear()
