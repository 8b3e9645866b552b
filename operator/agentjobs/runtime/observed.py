"""The objects as the watches last showed them, so that an event does not send a GET.

kopf keeps these indices (see :mod:`registration`) from the watch streams it
already holds, and calls no handler before every watch's first listing is in
them: Executions by namespace and name, Phases by the UID of the Execution
that controls them, phase pods by namespace and name, CronExecutions by
namespace and name and their Executions by the CronExecution's UID,
ExecutionQueues by namespace and name and the Executions naming each. An object written a
moment ago may still show its older version here; a reconcile acts on what
it reads, and the watch event of the write brings the next one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjobs.adapters.kube import JsonObject

ExecutionKey = tuple[str, str]


def _kept(body: Mapping[str, Any]) -> JsonObject:
    """The object without its managedFields, which nothing here reads and which make up much
    of what a thousand phases' objects would hold in memory."""
    meta = {key: value for key, value in body["metadata"].items() if key != "managedFields"}
    return {**body, "metadata": meta}


def execution_entry(body: Mapping[str, Any]) -> dict[ExecutionKey, JsonObject]:
    meta = body["metadata"]
    return {(meta["namespace"], meta["name"]): _kept(body)}


def queue_member_entry(body: Mapping[str, Any]) -> dict[ExecutionKey, JsonObject]:
    """An Execution that names a queue (R75), under its namespace and queue."""
    queue = (body.get("spec") or {}).get("queue")
    if not queue:
        return {}
    return {(body["metadata"]["namespace"], queue): _kept(body)}


def cron_run_entry(body: Mapping[str, Any]) -> dict[str, JsonObject]:
    """An Execution a CronExecution controls, under that CronExecution's UID (others: not
    indexed)."""
    references = body["metadata"].get("ownerReferences") or []
    return {
        ref["uid"]: _kept(body)
        for ref in references
        if ref.get("controller") and ref.get("kind") == "CronExecution"
    }


def phase_entry(body: Mapping[str, Any]) -> dict[str, JsonObject]:
    """A Phase under the UID of the Execution that controls it (none: not indexed)."""
    references = body["metadata"].get("ownerReferences") or []
    return {ref["uid"]: _kept(body) for ref in references if ref.get("controller")}


def pod_entry(body: Mapping[str, Any]) -> dict[ExecutionKey, JsonObject]:
    meta = body["metadata"]
    return {(meta["namespace"], meta["name"]): _kept(body)}


@dataclass(frozen=True)
class Observed:
    """Read access to kopf's indices (each key holds the objects that gave it)."""

    executions: Mapping[ExecutionKey, Collection[JsonObject]]
    phases: Mapping[str, Collection[JsonObject]]
    pods: Mapping[ExecutionKey, Collection[JsonObject]]
    cron_executions: Mapping[ExecutionKey, Collection[JsonObject]] = field(default_factory=dict)
    cron_runs: Mapping[str, Collection[JsonObject]] = field(default_factory=dict)
    queue_members: Mapping[ExecutionKey, Collection[JsonObject]] = field(default_factory=dict)
    execution_queues: Mapping[ExecutionKey, Collection[JsonObject]] = field(default_factory=dict)

    def execution(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.executions.get((namespace, name), ())), None)

    def cron_execution(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.cron_executions.get((namespace, name), ())), None)

    def executions_in_queue(self, namespace: str, queue: str) -> list[JsonObject]:
        return list(self.queue_members.get((namespace, queue), ()))

    def execution_queue(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.execution_queues.get((namespace, name), ())), None)

    def executions_owned_by(self, cron_uid: str) -> list[JsonObject]:
        return list(self.cron_runs.get(cron_uid, ()))

    def phases_of(self, owner_uid: str) -> list[JsonObject]:
        return list(self.phases.get(owner_uid, ()))

    def pod(self, namespace: str, name: str) -> JsonObject | None:
        return next(iter(self.pods.get((namespace, name), ())), None)
