"""What the node knows about a pod and its containers, kept up to date by the pod worker.

Plain records only, persisted across node restarts (see state.py) and seeded
from the API's status for a pod the node meets again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Obj = dict[str, Any]
StateKind = Literal["waiting", "running", "terminated"]

UNKNOWN_AFTER_TERMINATION = "The container could not be located when the pod was terminated"
UNKNOWN_AFTER_RESTART = (
    "The container could not be located after the node restarted.  The container used to be Running"
)


def rfc3339(epoch_seconds: float) -> str:
    """Second-precision UTC time, as pod statuses carry it."""
    return datetime.fromtimestamp(int(epoch_seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ContainerRecord:
    """One container's state, kept by the node and persisted across restarts."""

    name: str
    image: str
    image_id: str = ""
    state: StateKind = "waiting"
    waiting_reason: str = "ContainerCreating"
    waiting_message: str | None = None
    started_at: str | None = None
    terminated: Obj | None = None
    last_terminated: Obj | None = None
    restart_count: int = 0
    container_id: str | None = None
    instances: int = 0
    # The readiness probe's result; None without a readiness probe (ready when running).
    ready: bool | None = None

    def set_waiting(self, reason: str, message: str | None = None) -> None:
        if self.state == "terminated" and self.terminated is not None:
            self.last_terminated = self.terminated
        self.state, self.waiting_reason, self.waiting_message = "waiting", reason, message
        self.terminated = None
        self.started_at = None

    def set_running(self, container_id: str, started_at: str) -> None:
        if self.state == "terminated" and self.terminated is not None:
            self.last_terminated = self.terminated
        self.state, self.container_id, self.started_at = "running", container_id, started_at
        self.terminated = None

    def set_terminated(
        self, exit_code: int, reason: str, message: str | None, finished_at: str
    ) -> None:
        terminated: Obj = {"exitCode": exit_code, "reason": reason}
        if message:
            terminated["message"] = message
        terminated["startedAt"] = self.started_at
        terminated["finishedAt"] = finished_at
        if self.container_id:
            terminated["containerID"] = self.container_id
        self.state, self.terminated = "terminated", terminated

    @property
    def exit_code(self) -> int | None:
        return None if self.terminated is None else int(self.terminated["exitCode"])

    @property
    def last_exit_code(self) -> int | None:
        """Exit code of the latest finished instance, current or previous."""
        if self.terminated is not None:
            return int(self.terminated["exitCode"])
        if self.last_terminated is not None:
            return int(self.last_terminated["exitCode"])
        return None

    @property
    def has_run(self) -> bool:
        """It ran (or runs) at least once: not just waiting for a first start."""
        return self.state != "waiting" or self.last_terminated is not None

    def to_status(self) -> Obj:
        running = self.state == "running"
        state: Obj
        if self.state == "running":
            state = {"running": {"startedAt": self.started_at}}
        elif self.state == "terminated":
            state = {"terminated": dict(self.terminated or {})}
        else:
            waiting: Obj = {"reason": self.waiting_reason}
            if self.waiting_message:
                waiting["message"] = self.waiting_message
            state = {"waiting": waiting}
        status: Obj = {
            "name": self.name,
            "state": state,
            "lastState": {"terminated": dict(self.last_terminated)} if self.last_terminated else {},
            "ready": running and self.ready is not False,
            "restartCount": self.restart_count,
            "image": self.image,
            "imageID": self.image_id,
            "started": running,
        }
        if self.container_id:
            status["containerID"] = self.container_id
        return status


@dataclass
class PodRecord:
    """What the node knows about one pod beyond its spec."""

    uid: str
    init_containers: list[ContainerRecord] = field(default_factory=list)
    containers: list[ContainerRecord] = field(default_factory=list)
    start_time: str | None = None
    sandbox_ready: bool = False
    terminal: bool = False
    reason: str | None = None
    message: str | None = None
    # The DisruptionTarget condition's reason and message, for a pod the node evicts.
    disruption: list[str] | None = None
    transitions: dict[str, list[str]] = field(default_factory=dict)

    def all_records(self) -> list[ContainerRecord]:
        return [*self.init_containers, *self.containers]

    def find(self, name: str) -> ContainerRecord | None:
        for record in self.all_records():
            if record.name == name:
                return record
        return None


def record_for_pod(pod: Obj) -> PodRecord:
    """A fresh record for a pod, seeded from any status already in the API.

    A container the API shows running belonged to an earlier node process that
    is gone: it is reported terminated (ContainerStatusUnknown), never re-run
    behind the API's back.
    """
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    record = PodRecord(uid=pod["metadata"]["uid"], start_time=status.get("startTime"))
    known = {
        s["name"]: s
        for s in [
            *(status.get("initContainerStatuses") or []),
            *(status.get("containerStatuses") or []),
        ]
    }
    for key, target in (
        ("initContainers", record.init_containers),
        ("containers", record.containers),
    ):
        for container in spec.get(key) or []:
            has_init = bool(spec.get("initContainers"))
            entry = ContainerRecord(
                name=container["name"],
                image=container.get("image", ""),
                waiting_reason="PodInitializing" if has_init else "ContainerCreating",
            )
            seen = known.get(container["name"])
            if seen is not None:
                seed_from_status(entry, seen)
            target.append(entry)
    if status.get("phase") in ("Succeeded", "Failed"):
        record.terminal = True
        record.reason, record.message = status.get("reason"), status.get("message")
    return record


def seed_from_status(entry: ContainerRecord, seen: Obj) -> None:
    state = seen.get("state") or {}
    entry.restart_count = int(seen.get("restartCount") or 0)
    entry.container_id = seen.get("containerID")
    entry.image_id = seen.get("imageID") or ""
    entry.last_terminated = (seen.get("lastState") or {}).get("terminated")
    if "terminated" in state:
        entry.state, entry.terminated = "terminated", state["terminated"]
    elif "running" in state:
        entry.started_at = state["running"].get("startedAt")
        mark_lost(entry)
    if entry.state != "waiting" or entry.last_terminated is not None:
        entry.instances = entry.restart_count + 1


def mark_lost(entry: ContainerRecord) -> None:
    """A container whose process vanished with an earlier node process."""
    entry.state = "terminated"
    entry.terminated = {
        "exitCode": 137,
        "reason": "ContainerStatusUnknown",
        "message": UNKNOWN_AFTER_RESTART,
        "startedAt": entry.started_at,
        "finishedAt": rfc3339(time.time()),
    }
    if entry.container_id:
        entry.terminated["containerID"] = entry.container_id
