"""The objects as the watches last showed them, so that an event does not send a GET.

kopf keeps these indices (see :mod:`registration`) from the watch streams it
already holds, and calls no handler before every watch's first listing is in
them: Executions in one index under each key they are looked up by (namespace
and name; the queue they name; the UID of the CronExecution that controls
them), Phases by the UID of the Execution that controls them, phase pods,
CronExecutions and ExecutionQueues by namespace and name. An object written a
moment ago may still show its older version here; a reconcile acts on what
it reads, and the watch event of the write brings the next one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjobs.adapters.kube import JsonObject
from agentjobs.kube import naming

ExecutionKey = tuple[str, str]
# An Execution's keys in its one index: kopf runs each index's handler on every event, and
# the Executions' three lookups were three handlers, a fifth of the operator's indexing.
IndexKey = tuple[str, ...]


def by_name(namespace: str, name: str) -> IndexKey:
    return ("name", namespace, name)


def by_queue(namespace: str, queue: str) -> IndexKey:
    return ("queue", namespace, queue)


def by_cron(cron_uid: str) -> IndexKey:
    return ("cron", cron_uid)


def without_managed_fields(body: Mapping[str, Any]) -> JsonObject:
    """The object without its managedFields, which the operator never reads and which make
    up much of what a thousand phases' objects would hold in memory."""
    meta = {key: value for key, value in body["metadata"].items() if key != "managedFields"}
    return {**body, "metadata": meta}


def execution_entry(body: Mapping[str, Any]) -> dict[ExecutionKey, JsonObject]:
    meta = body["metadata"]
    return {(meta["namespace"], meta["name"]): without_managed_fields(body)}


def execution_entries(body: Mapping[str, Any]) -> dict[IndexKey, JsonObject]:
    """An Execution under its namespace and name; under its namespace and queue when it
    names one (R75); under the UID of the CronExecution that controls it, if one does."""
    meta = body["metadata"]
    kept = without_managed_fields(body)
    entries = {by_name(meta["namespace"], meta["name"]): kept}
    queue = (body.get("spec") or {}).get("queue")
    if queue:
        entries[by_queue(meta["namespace"], queue)] = kept
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "CronExecution":
            entries[by_cron(ref["uid"])] = kept
    return entries


def phase_entry(body: Mapping[str, Any]) -> dict[str, JsonObject]:
    """A Phase under the UID of the Execution that controls it (none: not indexed)."""
    references = body["metadata"].get("ownerReferences") or []
    return {ref["uid"]: without_managed_fields(body) for ref in references if ref.get("controller")}


# What the operator reads of a pod's spec: the restart policies and scheduling gates that
# tell a pod's trouble (pod_start, R61, R73), the agent's timeout probe and the timekeeper's
# arguments (agent_timeout). The rest (images, environment, mounts, volumes, security and
# the API server's defaults) was two thirds of a kept pod's memory.
POD_SPEC_READ = ("restartPolicy", "schedulingGates")
CONTAINER_READ = ("name", "restartPolicy", "livenessProbe", "args")


def pod_entry(body: Mapping[str, Any]) -> dict[ExecutionKey, JsonObject]:
    """A phase pod under its namespace and name, with only the spec the operator reads and
    without its prompt: the agent reads that annotation through its volume, the operator
    never does, and it may hold 16 KiB."""
    kept = without_managed_fields(body)
    annotations = kept["metadata"].get("annotations")
    if annotations and naming.ANNOTATION_PROMPT in annotations:
        kept["metadata"]["annotations"] = {
            key: value for key, value in annotations.items() if key != naming.ANNOTATION_PROMPT
        }
    if "spec" in kept:
        kept["spec"] = _pod_spec_read(kept["spec"])
    return {(kept["metadata"]["namespace"], kept["metadata"]["name"]): kept}


def _pod_spec_read(spec: Mapping[str, Any]) -> JsonObject:
    read: JsonObject = {key: spec[key] for key in POD_SPEC_READ if key in spec}
    for key in ("initContainers", "containers"):
        if key in spec:
            read[key] = [
                {field: container[field] for field in CONTAINER_READ if field in container}
                for container in spec[key]
            ]
    return read


@dataclass(frozen=True)
class Observed:
    """Read access to kopf's indices (each key holds the objects that gave it)."""

    executions: Mapping[IndexKey, Collection[JsonObject]]
    phases: Mapping[str, Collection[JsonObject]]
    pods: Mapping[ExecutionKey, Collection[JsonObject]]
    cron_executions: Mapping[ExecutionKey, Collection[JsonObject]] = field(default_factory=dict)
    execution_queues: Mapping[ExecutionKey, Collection[JsonObject]] = field(default_factory=dict)

    def execution(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.executions.get(by_name(namespace, name), ())), None)

    def cron_execution(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.cron_executions.get((namespace, name), ())), None)

    def executions_in_queue(self, namespace: str, queue: str) -> list[JsonObject]:
        return list(self.executions.get(by_queue(namespace, queue), ()))

    def execution_queue(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.execution_queues.get((namespace, name), ())), None)

    def executions_owned_by(self, cron_uid: str) -> list[JsonObject]:
        return list(self.executions.get(by_cron(cron_uid), ()))

    def phases_of(self, owner_uid: str) -> list[JsonObject]:
        return list(self.phases.get(owner_uid, ()))

    def pod(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.pods.get((namespace, name), ())), None)
