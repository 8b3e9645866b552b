"""Pod status as the kubelet reports it, computed from what the node knows.

Pure functions only: the pod worker keeps a PodRecord up to date and
`pod_status` turns it into the `status` stanza the kubelet would write.
"""

from __future__ import annotations

from typing import Any

from .records import UNKNOWN_AFTER_TERMINATION, PodRecord

Obj = dict[str, Any]
TERMINAL_PHASES = ("Succeeded", "Failed")


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
            elif status.ready is False:
                unready.append(container["name"])
        elif status is None or status.state != "terminated" or status.exit_code != 0:
            incomplete.append(container["name"])
    regular_started = False
    for container in spec.get("containers") or []:
        status = by_name.get(container["name"])
        if status is None or status.state != "running" or status.ready is False:
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
    if record.terminal and record.disruption is not None:
        # Sent only with the terminal phase (mergePodStatus, pkg/kubelet/status/status_manager.go).
        reason, message = record.disruption
        conditions.append(_condition(record, "DisruptionTarget", True, reason, message, now))
    return conditions


def pod_status(
    pod: Obj,
    record: PodRecord,
    host_ip: str,
    now: str,
    previous_phase: str | None = None,
    *,
    pod_ip: str | None = None,
) -> Obj:
    """The full status the node writes; conditions owned by others are kept.

    `previous_phase` is the phase the node wrote last (else the API's); `pod_ip`
    defaults to the node's (network.py gives each pod its own).
    """
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
    previous = previous_phase or (pod.get("status") or {}).get("phase") or "Pending"
    if phase in TERMINAL_PHASES and not record.terminal:
        # A pod that could still have running containers keeps its phase until the worker has
        # stopped them all (mergePodStatus in pkg/kubelet/status/status_manager.go).
        phase = previous if previous not in TERMINAL_PHASES else phase
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
        "podIP": pod_ip or host_ip,
        "podIPs": [{"ip": pod_ip or host_ip}],
        "startTime": record.start_time,
        "containerStatuses": [r.to_status() for r in record.containers],
        # Like the phase, a terminal reason waits for the containers to have stopped.
        "reason": record.reason if record.terminal else None,
        "message": record.message if record.terminal else None,
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [r.to_status() for r in record.init_containers]
    return status
