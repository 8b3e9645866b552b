"""Pod status computed like the kubelet's, for the situations the node meets."""

from __future__ import annotations

from typing import Any

from devcluster.node.heartbeat import node_conditions
from devcluster.node.records import ContainerRecord, PodRecord, record_for_pod
from devcluster.node.status import pod_phase, pod_status

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:10Z"


def _pod(
    restart: str = "Never", init: list[Obj] | None = None, containers: tuple[str, ...] = ("main",)
) -> Obj:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {
            "restartPolicy": restart,
            "initContainers": init or [],
            "containers": [{"name": n, "image": "busybox"} for n in containers],
        },
        "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]},
    }


def _record(pod: Obj) -> PodRecord:
    return record_for_pod(pod)


def _conditions(status: Obj) -> dict[str, tuple[str, str | None]]:
    return {c["type"]: (c["status"], c.get("reason")) for c in status["conditions"]}


def test_new_pod_is_pending_with_container_creating() -> None:
    pod = _pod()
    record = _record(pod)
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Pending"
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert _conditions(status)["Ready"] == ("False", "ContainersNotReady")
    assert _conditions(status)["PodScheduled"] == ("True", None)  # the scheduler's is kept


def test_running_then_failed_exit_code() -> None:
    pod = _pod()
    record = _record(pod)
    record.sandbox_ready = True
    main = record.containers[0]
    main.set_running("process://1", NOW)
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Running"
    assert _conditions(status)["Ready"] == ("True", None)
    assert status["containerStatuses"][0]["ready"] is True
    main.set_terminated(3, "Error", None, NOW)
    record.terminal = True
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Failed"
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert terminated["containerID"] == "process://1"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["message"] == "containers with unready status: [main]"


def test_succeeded_pod_conditions_say_pod_completed() -> None:
    pod = _pod()
    record = _record(pod)
    record.containers[0].set_running("process://1", NOW)
    record.containers[0].set_terminated(0, "Completed", None, NOW)
    record.terminal = True
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Succeeded"
    assert _conditions(status)["ContainersReady"] == ("False", "PodCompleted")


def test_init_containers_gate_initialized() -> None:
    pod = _pod(init=[{"name": "setup"}, {"name": "side", "restartPolicy": "Always"}])
    record = _record(pod)
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    initialized = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert initialized["message"] == "containers with incomplete status: [setup side]"
    setup, side = record.init_containers
    setup.set_running("process://s", NOW)
    setup.set_terminated(0, "Completed", None, NOW)
    side.set_running("process://side", NOW)
    assert _conditions(pod_status(pod, record, "127.0.0.1", NOW))["Initialized"][0] == "True"


def test_failed_init_container_fails_a_never_pod_only() -> None:
    pod = _pod(init=[{"name": "setup"}])
    record = _record(pod)
    record.init_containers[0].set_running("process://s", NOW)
    record.init_containers[0].set_terminated(1, "Error", None, NOW)
    assert pod_phase(pod["spec"], record) == "Failed"
    pod["spec"]["restartPolicy"] = "OnFailure"
    assert pod_phase(pod["spec"], record) == "Pending"


def test_on_failure_restarting_container_keeps_pod_running() -> None:
    pod = _pod(restart="OnFailure")
    record = _record(pod)
    main = record.containers[0]
    main.set_running("process://1", NOW)
    main.set_terminated(1, "Error", None, NOW)
    main.set_waiting("CrashLoopBackOff", "back-off")
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Running"
    assert status["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 1


def test_deadline_exceeded_is_failed_with_reason_and_unknown_waiting_containers() -> None:
    pod = _pod(containers=("a", "b"))
    record = _record(pod)
    record.containers[0].set_running("process://1", NOW)
    record.containers[0].set_terminated(143, "Error", None, NOW)
    record.terminal, record.reason, record.message = True, "DeadlineExceeded", "too long"
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert (status["phase"], status["reason"]) == ("Failed", "DeadlineExceeded")
    assert status["containerStatuses"][1]["state"]["terminated"]["reason"] == (
        "ContainerStatusUnknown"
    )


def test_transition_times_only_move_on_change() -> None:
    pod = _pod()
    record = _record(pod)
    first = pod_status(pod, record, "127.0.0.1", "2026-01-01T00:00:00Z")
    again = pod_status(pod, record, "127.0.0.1", "2026-01-01T00:00:05Z")
    assert first["conditions"] == again["conditions"]


def test_record_seeded_from_api_marks_running_containers_lost() -> None:
    pod = _pod(restart="OnFailure")
    pod["status"] = {
        "phase": "Running",
        "startTime": NOW,
        "containerStatuses": [
            {
                "name": "main",
                "restartCount": 2,
                "containerID": "process://x",
                "state": {"running": {"startedAt": NOW}},
                "lastState": {},
            }
        ],
    }
    record = record_for_pod(pod)
    main = record.containers[0]
    assert main.state == "terminated" and main.terminated is not None
    assert main.terminated["reason"] == "ContainerStatusUnknown"
    assert (main.restart_count, main.instances) == (2, 3)
    assert record.start_time == NOW


def test_container_record_moves_terminated_to_last_state_on_restart() -> None:
    record = ContainerRecord(name="c", image="i")
    record.set_running("process://1", NOW)
    record.set_terminated(1, "Error", None, NOW)
    record.set_running("process://2", NOW)
    status = record.to_status()
    assert status["lastState"]["terminated"]["containerID"] == "process://1"
    assert status["state"] == {"running": {"startedAt": NOW}}


def test_running_sidecar_keeps_a_finished_pod_running_until_it_stops() -> None:
    # The kubelet's getPhase counts a running sidecar as running: Succeeded is written
    # only with the sidecar's terminated state in the same status.
    pod = _pod(init=[{"name": "side", "restartPolicy": "Always"}])
    record = _record(pod)
    side, main = record.init_containers[0], record.containers[0]
    side.set_running("process://side", NOW)
    main.set_running("process://main", NOW)
    main.set_terminated(0, "Completed", None, NOW)
    assert pod_phase(pod["spec"], record) == "Running"
    side.set_terminated(0, "Completed", None, NOW)
    record.terminal = True
    status = pod_status(pod, record, "127.0.0.1", NOW)
    assert status["phase"] == "Succeeded"
    assert "terminated" in status["initContainerStatuses"][0]["state"]


def test_terminal_phase_waits_until_the_worker_has_stopped_every_container() -> None:
    # mergePodStatus keeps the old phase while the pod could still have running containers.
    pod = _pod(containers=("a", "b"))
    record = _record(pod)
    a, b = record.containers
    a.set_running("process://a", NOW)
    b.set_running("process://b", NOW)
    assert pod_status(pod, record, "127.0.0.1", NOW)["phase"] == "Running"
    a.set_terminated(0, "Completed", None, NOW)
    b.set_terminated(0, "Completed", None, NOW)
    status = pod_status(pod, record, "127.0.0.1", NOW, previous_phase="Running")
    assert status["phase"] == "Running"
    record.terminal = True
    assert pod_status(pod, record, "127.0.0.1", NOW, "Running")["phase"] == "Succeeded"


def test_terminal_reason_is_only_written_with_the_terminal_phase() -> None:
    pod = _pod()
    record = _record(pod)
    record.containers[0].set_running("process://1", NOW)
    record.reason, record.message = "DeadlineExceeded", "too long"  # set before the kill
    status = pod_status(pod, record, "127.0.0.1", NOW, "Running")
    assert (status["phase"], status["reason"], status["message"]) == ("Running", None, None)
    record.containers[0].set_terminated(143, "Error", None, NOW)
    record.terminal = True
    status = pod_status(pod, record, "127.0.0.1", NOW, "Running")
    assert (status["phase"], status["reason"]) == ("Failed", "DeadlineExceeded")


def test_evicted_pod_is_failed_with_a_disruption_target_condition() -> None:
    pod = _pod(restart="Always")
    record = _record(pod)
    record.containers[0].set_running("process://1", NOW)
    record.reason, record.message = "Evicted", "The node was low on resource: memory. "
    record.disruption = ["TerminationByKubelet", record.message]
    assert "DisruptionTarget" not in _conditions(pod_status(pod, record, "127.0.0.1", NOW))
    record.containers[0].set_terminated(0, "Completed", None, NOW)
    record.terminal = True
    status = pod_status(pod, record, "127.0.0.1", NOW, "Running")
    assert (status["phase"], status["reason"]) == ("Failed", "Evicted")
    assert _conditions(status)["DisruptionTarget"] == ("True", "TerminationByKubelet")
    target = next(c for c in status["conditions"] if c["type"] == "DisruptionTarget")
    assert target["message"] == "The node was low on resource: memory. "


def test_node_ready_after_unknown_gets_a_new_transition_time() -> None:
    current = [
        {"type": "Ready", "status": "Unknown", "lastTransitionTime": "2026-01-01T00:00:00Z"},
        {"type": "DiskPressure", "status": "False", "lastTransitionTime": "2025-12-31T00:00:00Z"},
    ]
    conditions = {c["type"]: c for c in node_conditions(current, NOW)}
    assert (conditions["Ready"]["status"], conditions["Ready"]["lastTransitionTime"]) == (
        "True",
        NOW,
    )
    assert conditions["DiskPressure"]["lastTransitionTime"] == "2025-12-31T00:00:00Z"
