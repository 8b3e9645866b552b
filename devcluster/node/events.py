"""Kubelet-style events for pods (Created, Started, Killing, Failed, BackOff)."""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import UTC, datetime
from typing import Any

from .api import ApiError, KubeApi

Obj = dict[str, Any]
log = logging.getLogger(__name__)


def event_body(
    pod: Obj, node_name: str, kind: str, reason: str, message: str, field_path: str | None
) -> Obj:
    meta = pod["metadata"]
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    involved: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    if field_path:
        involved["fieldPath"] = field_path
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta['name']}.{secrets.token_hex(8)}",
            "namespace": meta["namespace"],
        },
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": "kubelet", "host": node_name},
        "reportingComponent": "kubelet",
        "reportingInstance": node_name,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }


class EventRecorder:
    """Posts events in the background; losing one never disturbs a pod."""

    def __init__(self, api: KubeApi, node_name: str) -> None:
        self.api = api
        self.node_name = node_name
        self._pending: set[asyncio.Task[None]] = set()

    def record(
        self,
        pod: Obj,
        kind: str,
        reason: str,
        message: str,
        container: str | None = None,
        init: bool = False,
    ) -> None:
        field_path = None
        if container is not None:
            field_path = f"spec.{'initContainers' if init else 'containers'}{{{container}}}"
        body = event_body(pod, self.node_name, kind, reason, message, field_path)
        task = asyncio.create_task(self._post(body))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _post(self, body: Obj) -> None:
        try:
            await self.api.request(
                "POST", f"/api/v1/namespaces/{body['metadata']['namespace']}/events", body=body
            )
        except (ApiError, OSError, TimeoutError) as error:
            log.debug("event not recorded: %s", error)

    async def drain(self) -> None:
        if self._pending:
            await asyncio.wait(self._pending, timeout=2)
