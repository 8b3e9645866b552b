"""Pod status as the kubelet reports it, computed from what the node knows.

Pure functions and plain records only: the pod worker keeps a PodRecord up to
date and `pod_status` turns it into the `status` stanza the kubelet would write.
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
            "ready": running,
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
    transitions: dict[str, list[str]] = field(default_factory=dict)

    def all_records(self) -> list[ContainerRecord]:
        return [*self.init_containers, *self.containers]

    def find(self, name: str) -> ContainerRecord | None:
        for record in self.all_records():
            if record.name == name:
                return record
        return None


def is_sidecar(container: Obj) -> bool:
    return container.get("restartPolicy") == "Always"


def pod_phase(spec: Obj, record: PodRecord) -> str:
    """The kubelet's phase rules, `terminal` standing for podIsTerminal.

    Follows getPhase in pkg/kubelet/kubelet_pods.go (v1.35): a running sidecar
    counts as running, so a pod whose regular containers are done stays
    `Running` until its sidecars have stopped too and the pod is terminal;
    the terminal status is then written in one update with every container's
    terminated state.
    """
    if record.terminal and record.reason:
        return "Failed"
    by_name = {r.name: r for r in record.all_records()}
    restart_policy = spec.get("restartPolicy") or "Always"
    pending_regular_init = failed_init = pending_sidecars = 0
    unknown = running = waiting = stopped = succeeded = 0
    for container in spec.get("initContainers") or []:
        status = by_name.get(container["name"])
        if is_sidecar(container):
            if status is None:
                unknown += 1
            elif status.state == "running":
                running += 1
            elif status.state == "waiting" and status.last_terminated is None:
                pending_sidecars += 1
                waiting += 1
            continue  # a terminated sidecar does not count for the phase
        if status is None or status.state == "running":
            pending_regular_init += 1
        elif status.state == "terminated":
            failed_init += status.exit_code != 0
        elif status.last_terminated is not None:
            failed_init += int(status.last_terminated["exitCode"]) != 0
        else:
            pending_regular_init += 1
    for container in spec.get("containers") or []:
        status = by_name.get(container["name"])
        if status is None:
            unknown += 1
        elif status.state == "running":
            running += 1
        elif status.state == "terminated":
            stopped += 1
            succeeded += status.exit_code == 0
        elif status.last_terminated is not None:
            stopped += 1
        else:
            waiting += 1
    if failed_init > 0 and restart_policy == "Never":
        return "Failed"
    # podHasInitialized: the regular containers have been started once.
    initialized = any(
        by_name[c["name"]].has_run for c in spec.get("containers") or [] if c["name"] in by_name
    )
    if pending_regular_init > 0 or (pending_sidecars > 0 and not initialized) or waiting > 0:
        return "Pending"
    if running > 0 and unknown == 0:
        return "Running"
    if running == 0 and stopped > 0 and unknown == 0:
        if record.terminal:
            return "Succeeded" if stopped == succeeded else "Failed"
        if restart_policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        return "Failed" if restart_policy == "Never" else "Running"
    return "Pending"


def _names(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _condition(
    record: PodRecord, kind: str, ok: bool, reason: str | None, message: str | None, now: str
) -> Obj:
    value = "True" if ok else "False"
    previous = record.transitions.get(kind)
    if previous is None or previous[0] != value:
        record.transitions[kind] = [value, now]
    condition: Obj = {
        "type": kind,
        "status": value,
        "lastProbeTime": None,
        "lastTransitionTime": record.transitions[kind][1],
    }
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def pod_conditions(spec: Obj, record: PodRecord, phase: str, now: str) -> list[Obj]:
    """PodReadyToStartContainers, Initialized, Ready and ContainersReady."""
    by_name = {r.name: r for r in record.all_records()}
    incomplete: list[str] = []
    unready: list[str] = []
    for container in spec.get("initContainers") or []:
        status = by_name.get(container["name"])
        if is_sidecar(container):
            if status is None or status.state != "running":
                incomplete.append(container["name"])
                unready.append(container["name"])
        elif status is None or status.state != "terminated" or status.exit_code != 0:
            incomplete.append(container["name"])
    regular_started = False
    for container in spec.get("containers") or []:
        status = by_name.get(container["name"])
        if status is None or status.state != "running":
            unready.append(container["name"])
        if status is not None and status.has_run:
            regular_started = True

    conditions = [
        _condition(record, "PodReadyToStartContainers", record.sandbox_ready, None, None, now)
    ]
    if phase == "Succeeded" and spec.get("initContainers"):
        conditions.append(_condition(record, "Initialized", True, "PodCompleted", None, now))
    elif incomplete and not regular_started:
        message = f"containers with incomplete status: {_names(incomplete)}"
        conditions.append(
            _condition(record, "Initialized", False, "ContainersNotInitialized", message, now)
        )
    else:
        conditions.append(_condition(record, "Initialized", True, None, None, now))
    for kind in ("Ready", "ContainersReady"):
        if phase == "Succeeded":
            conditions.append(_condition(record, kind, False, "PodCompleted", None, now))
        elif unready:
            message = f"containers with unready status: {_names(unready)}"
            conditions.append(_condition(record, kind, False, "ContainersNotReady", message, now))
        else:
            conditions.append(_condition(record, kind, True, None, None, now))
    return conditions


def pod_status(pod: Obj, record: PodRecord, host_ip: str, now: str) -> Obj:
    """The full status the node writes; conditions owned by others are kept."""
    spec = pod.get("spec") or {}
    if record.terminal:
        for container_record in record.all_records():
            if container_record.state != "terminated":
                # A terminal pod never runs these again: report them as the kubelet does.
                container_record.state = "terminated"
                container_record.terminated = {
                    "exitCode": 137,
                    "reason": "ContainerStatusUnknown",
                    "message": UNKNOWN_AFTER_TERMINATION,
                }
    phase = pod_phase(spec, record)
    ours = pod_conditions(spec, record, phase, now)
    owned = {c["type"] for c in ours}
    foreign = [
        c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") not in owned
    ]
    status: Obj = {
        "phase": phase,
        "conditions": ours + foreign,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": host_ip,
        "podIPs": [{"ip": host_ip}],
        "startTime": record.start_time,
        "containerStatuses": [r.to_status() for r in record.containers],
        "reason": record.reason,
        "message": record.message,
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [r.to_status() for r in record.init_containers]
    return status


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
