"""Reading a phase pod's status into run facts and blockers (R15, R36).

Cases: the agent container waiting, running and terminated; an ended pod
whose agent never ran; deletions, disruptions, evictions and
lost nodes as interruptions, a deletion after the agent's own end not; deadlines,
OOM kills and start errors as failures; a clean exit as no failure; whether the
harvester sidecar is done.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentjobs.kube import pod_state
from agentjobs.kube.naming import ANNOTATION_DELETION_REQUESTED
from agentjobs.kube.pod_state import Stage
from agentjobs.models.contract import FailureKind


def pod(state: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    statuses = [{"name": "agent", "state": state}] if state is not None else []
    return {"status": {"containerStatuses": statuses, **status}}


def test_the_agent_states_are_read() -> None:
    assert pod_state.agent_state(pod({"running": {}}), "agent").stage is Stage.RUNNING
    waiting = pod_state.agent_state(pod({"waiting": {"reason": "ContainerCreating"}}), "agent")
    assert (waiting.stage, waiting.reason) == (Stage.WAITING, "ContainerCreating")
    ended = pod_state.agent_state(pod({"terminated": {"exitCode": 3, "reason": "Error"}}), "agent")
    assert (ended.stage, ended.exit_code) == (Stage.TERMINATED, 3)


def test_a_pod_that_ended_before_its_agent_ran_is_terminated_without_an_exit_code() -> None:
    state = pod_state.agent_state(
        pod({"waiting": {"reason": "PodInitializing"}}, phase="Failed", reason="DeadlineExceeded"),
        "agent",
    )
    assert (state.stage, state.exit_code, state.reason) == (
        Stage.TERMINATED,
        None,
        "DeadlineExceeded",
    )


@pytest.mark.parametrize(
    ("status", "state", "kind", "code"),
    [
        (
            {"reason": "DeadlineExceeded"},
            {"exitCode": 137},
            FailureKind.TIMEOUT,
            "DeadlineExceeded",
        ),
        ({}, {"exitCode": 137, "reason": "OOMKilled"}, FailureKind.OUT_OF_MEMORY, "OOMKilled"),
        ({}, {"exitCode": 128, "reason": "StartError"}, FailureKind.CONFIG, "StartError"),
    ],
)
def test_r15_abnormal_ends_are_named(
    status: dict[str, Any], state: dict[str, Any], kind: FailureKind, code: str
) -> None:
    ended = pod({"terminated": state}, **status)
    failure = pod_state.termination_failure(ended, pod_state.agent_state(ended, "agent"))
    assert failure is not None
    assert (failure.kind, failure.code) == (kind, code)


def test_r15_a_plain_exit_is_not_a_system_failure() -> None:
    for code in (0, 1):
        ended = pod({"terminated": {"exitCode": code}})
        assert pod_state.termination_failure(ended, pod_state.agent_state(ended, "agent")) is None


def sidecar(state: dict[str, Any], phase: str = "Running") -> dict[str, Any]:
    return {
        "status": {"phase": phase, "initContainerStatuses": [{"name": "harvester", "state": state}]}
    }


def test_the_harvester_is_done_only_when_it_has_terminated() -> None:
    assert not pod_state.has_ended(sidecar({"running": {}}, phase="Succeeded"), "harvester")
    assert pod_state.has_ended(sidecar({"terminated": {"exitCode": 0}}), "harvester")
    assert pod_state.has_ended(sidecar({"waiting": {}}, phase="Failed"), "harvester")
    assert pod_state.has_ended({"status": {}}, "harvester")


CREATED = datetime(2026, 12, 1, 9, tzinfo=UTC)


def deleting(**status: Any) -> dict[str, Any]:
    ended = pod({"terminated": {"exitCode": 0}}, **status)
    return {**ended, "metadata": {"deletionTimestamp": "2026-12-01T09:00:30Z"}}


def test_r22a_a_pod_deleted_from_outside_is_an_interruption_even_after_a_clean_exit() -> None:
    failure = pod_state.interruption(deleting(), deleted_by_operator=False)
    assert failure is not None and failure.code == "PodDeleted"
    assert pod_state.interruption(deleting(), deleted_by_operator=True) is None
    assert pod_state.removal_deadline(deleting()) == CREATED + timedelta(seconds=30)


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (
            {
                "conditions": [
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "reason": "DeletionByTaintManager",
                        "message": "Taint manager: deleting due to NoExecute taint",
                    }
                ]
            },
            "DeletionByTaintManager",
        ),
        ({"phase": "Failed", "reason": "Evicted", "message": "low on memory"}, "Evicted"),
        ({"reason": "NodeLost", "message": "node devnode is unresponsive"}, "NodeLost"),
    ],
)
def test_r22a_disruption_eviction_and_node_loss_are_interruptions(
    status: dict[str, Any], code: str
) -> None:
    lost = pod({"running": {}}, **status)
    failure = pod_state.interruption(lost, deleted_by_operator=True)
    assert failure is not None
    assert (failure.kind, failure.code) == (FailureKind.TRANSIENT, code)


def test_a_running_pod_is_not_interrupted() -> None:
    assert pod_state.interruption(pod({"running": {}}), deleted_by_operator=False) is None


def test_a_deletion_after_the_agent_ended_on_its_own_is_not_an_interruption() -> None:
    ended = pod({"terminated": {"exitCode": 0, "finishedAt": "2026-12-01T09:00:00Z"}})
    late = {"deletionTimestamp": "2026-12-01T09:00:40Z", "deletionGracePeriodSeconds": 30}
    agent = pod_state.agent_state(ended, "agent")
    after = {**ended, "metadata": late}
    assert pod_state.interruption(after, deleted_by_operator=False, agent=agent) is None
    early = {"deletionTimestamp": "2026-12-01T09:00:30Z", "deletionGracePeriodSeconds": 30}
    before = {**ended, "metadata": early}
    assert pod_state.interruption(before, deleted_by_operator=False, agent=agent) is not None


def test_after_the_kubelets_last_delete_the_recorded_request_time_decides() -> None:
    # The kubelet's grace-0 delete moves deletionTimestamp to its own moment (09:01:00),
    # long after both the agent's exit and the request (09:00:02).
    ended = pod({"terminated": {"exitCode": 143, "finishedAt": "2026-12-01T09:00:03Z"}})
    agent = pod_state.agent_state(ended, "agent")
    final = {"deletionTimestamp": "2026-12-01T09:01:00Z", "deletionGracePeriodSeconds": 0}
    unrecorded = {**ended, "metadata": final}
    cut = pod_state.interruption(unrecorded, deleted_by_operator=False, agent=agent)
    assert cut is not None and cut.code == "PodDeleted"
    before = {ANNOTATION_DELETION_REQUESTED: "2026-12-01T09:00:02Z"}
    recorded = {**ended, "metadata": {**final, "annotations": before}}
    assert pod_state.interruption(recorded, deleted_by_operator=False, agent=agent) is not None
    after = {ANNOTATION_DELETION_REQUESTED: "2026-12-01T09:00:30Z"}
    late = {**ended, "metadata": {**final, "annotations": after}}
    assert pod_state.interruption(late, deleted_by_operator=False, agent=agent) is None
    hostile = {**ended, "metadata": {**final, "annotations": {ANNOTATION_DELETION_REQUESTED: "x"}}}
    assert pod_state.interruption(hostile, deleted_by_operator=False, agent=agent) is not None


def test_a_pod_on_a_lost_node_is_not_waited_on() -> None:
    taint = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}
    assert pod_state.node_lost(pod({"running": {}}, conditions=[taint]))
    assert pod_state.node_lost(pod({"running": {}}, reason="NodeLost"))
    kubelet = {**taint, "reason": "TerminationByKubelet"}
    assert not pod_state.node_lost(pod({"running": {}}, conditions=[kubelet]))
