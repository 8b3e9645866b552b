"""An in-memory stand-in for the API server, for unit tests of the phase runner.

It keeps objects by path and answers as the operator's ``Kube`` adapter does (None for a
missing object, a merge patch applied, a deletion held by finalizers), and it plays the
kubelet only when a test says so: a test sets a pod's status and its containers' logs, then
wakes the runner. Integration tests run the real API server and kubelet; this is for the
runner's own decisions, which must not wait on either.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

JsonObject = dict[str, Any]


def _merged(target: JsonObject, patch: JsonObject) -> JsonObject:
    """RFC 7386: ``patch`` merged into ``target``; a null removes the key."""
    merged = dict(target)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _selected(labels: dict[str, str], selector: str) -> bool:
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if key not in labels or (value and labels[key] != value):
            return False
    return True


class MemoryKube:
    """Objects by path; ``requests`` lists every call as (verb, path), ``patches`` every
    merge patch sent."""

    def __init__(self) -> None:
        self.objects: dict[str, JsonObject] = {}
        self.logs: dict[tuple[str, str], bytes] = {}  # (pod path, container) -> bytes
        self.requests: list[tuple[str, str]] = []
        self.patches: list[JsonObject] = []
        self._versions = itertools.count(1)

    def put(self, path: str, body: JsonObject) -> JsonObject:
        """Store ``body`` at ``path`` as the API server would have it."""
        meta = body.setdefault("metadata", {})
        meta.setdefault("uid", f"uid-{path.rsplit('/', 1)[-1]}")
        meta.setdefault("generation", 1)
        meta["resourceVersion"] = str(next(self._versions))
        self.objects[path] = body
        return copy.deepcopy(body)

    def set_pod_status(self, path: str, status: JsonObject) -> None:
        """What the kubelet would write: the pod's status, whole."""
        self.objects[path]["status"] = copy.deepcopy(status)
        self.objects[path]["metadata"]["resourceVersion"] = str(next(self._versions))

    async def get(self, path: str) -> JsonObject | None:
        self.requests.append(("GET", path))
        found = self.objects.get(path)
        return None if found is None else copy.deepcopy(found)

    async def list(self, path: str, *, label_selector: str) -> list[JsonObject]:
        self.requests.append(("LIST", path))
        return [
            copy.deepcopy(body)
            for key, body in self.objects.items()
            if key.rsplit("/", 1)[0] == path
            and _selected(body["metadata"].get("labels") or {}, label_selector)
        ]

    async def create(self, path: str, body: JsonObject) -> JsonObject | None:
        self.requests.append(("POST", path))
        name = body["metadata"]["name"]
        if f"{path}/{name}" in self.objects:
            return None
        namespace = path.split("/namespaces/", 1)[1].split("/", 1)[0]
        body = copy.deepcopy(body)
        body["metadata"]["namespace"] = namespace
        return self.put(f"{path}/{name}", body)

    async def merge_patch(self, path: str, patch: JsonObject) -> JsonObject | None:
        self.requests.append(("PATCH", path))
        self.patches.append(copy.deepcopy(patch))
        target = path.removesuffix("/status")
        if target not in self.objects:
            return None
        body = _merged(self.objects[target], patch)
        return self.put(target, body)

    async def remove_finalizer(self, path: str, finalizer: str, *, uid: str) -> None:
        self.requests.append(("UNFINALIZE", path))
        body = self.objects.get(path)
        if body is None or body["metadata"]["uid"] != uid:
            return
        meta = body["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
        self._collect(path)

    async def delete(
        self, path: str, *, grace_period_seconds: int | None = None, uid: str | None = None
    ) -> None:
        self.requests.append(("DELETE", path))
        body = self.objects.get(path)
        if body is None or (uid is not None and body["metadata"]["uid"] != uid):
            return
        meta = body["metadata"]
        meta.setdefault("deletionTimestamp", datetime.now(UTC).isoformat(timespec="seconds"))
        meta.setdefault("deletionGracePeriodSeconds", grace_period_seconds or 30)
        self._collect(path)

    def _collect(self, path: str) -> None:
        """A deleted object goes once no finalizer holds it."""
        meta = self.objects[path]["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            del self.objects[path]

    async def log_tail(self, namespace: str, pod: str, container: str) -> str:
        return ""

    async def stream_log(
        self, namespace: str, pod: str, container: str, *, follow: bool, idle_seconds: float
    ) -> AsyncIterator[bytes]:
        """The log as the test wrote it, whole; a followed stream ends there too (the test
        writes a container's log before it says the container ended)."""
        self.requests.append(("LOG", f"{namespace}/{pod}/{container}"))
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}"
        data = self.logs.get((path, container), b"")
        if data:
            yield data
