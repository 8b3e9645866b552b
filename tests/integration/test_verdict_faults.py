"""Verdicts that survive what a real cluster does (issue 9), on the local cluster.

Each test makes one fault happen for real and checks the verdict the operator
writes: an ended Execution is not written again; an Execution deleted and applied
again under its name runs its own Phase and pod; a Phase deleted from outside ends
its Execution interrupted and is never re-run; a pod deleted from outside is
interrupted, not the agent's 143 or 0; a slow but healthy start (the kubelet
stopped for longer than the pending timeout) is not failed by that timeout; a
restart after the run's facts were checkpointed never reads the log again. (A pod
on a lost node and a log stream cut before the report are test_real_faults.py's,
an eviction test_real_containers.py's and test_cluster_policy.py's.)
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentjobs.kube import naming
from devcluster import testing
from devcluster.testing import Kubectl
from tests import builders
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)


# Leaves a deliverable and reports success with the comment given.
def delivered(comments: str) -> str:
    """A script that writes its result and reports ``comments``."""
    report = builders.echo_block(builders.report(comments=comments))
    return f'echo result > "$AGENTJOBS_OUTPUT_DIR/result.txt"; {report}'


execution = builders.shell_execution


def resource_version(kubectl: Kubectl, namespace: str, kind: str, name: str) -> str:
    return str(kubectl.json("get", "-n", namespace, kind, name)["metadata"]["resourceVersion"])


def events(kubectl: Kubectl, namespace: str, reason: str) -> list[Any]:
    items = kubectl.json("get", "events", "-n", namespace)["items"]
    return [e for e in items if e.get("reason") == reason]


def test_an_ended_execution_is_not_written_again(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    manifest = execution("precancelled", "sleep 30")
    manifest["spec"]["cancel"] = True
    kubectl.apply(manifest, namespace)
    assert wait_finished(kubectl, namespace, "precancelled")["status"] == "cancelled"
    before = resource_version(kubectl, namespace, "execution", "precancelled")
    time.sleep(5)
    assert resource_version(kubectl, namespace, "execution", "precancelled") == before


def test_an_execution_applied_again_under_its_name_runs_its_own_phase(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("again", "sleep 3; " + delivered("first")), namespace)
    wait_for(
        lambda: phase_status(kubectl, namespace, "again-0-step0").get("status") == "running",
        what="the first incarnation to run",
    )
    kubectl.run("delete", "execution", "again", "-n", namespace, "--wait=false")
    kubectl.apply(execution("again", delivered("second"), keepPods=True), namespace)
    status = wait_finished(kubectl, namespace, "again", timeout=90)
    uid = kubectl.json("get", "-n", namespace, "execution", "again")["metadata"]["uid"]
    phase = kubectl.json("get", "-n", namespace, "phase", "again-0-step0")
    assert phase["metadata"]["ownerReferences"][0]["uid"] == uid
    assert (status["status"], phase["status"]["report"]["comments"]) == ("completed", "second")
    pod = kubectl.json("get", "-n", namespace, "pod", "again-0-step0-a1")
    assert pod["metadata"]["ownerReferences"][0]["uid"] == phase["metadata"]["uid"]


def test_a_phase_deleted_from_outside_interrupts_and_is_never_run_again(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("cut", "sleep 30", "echo never"), namespace)
    wait_for(
        lambda: phase_status(kubectl, namespace, "cut-0-step0").get("status") == "running",
        what="the phase to run",
    )
    kubectl.run("delete", "phase", "cut-0-step0", "-n", namespace)
    status = wait_finished(kubectl, namespace, "cut")
    assert (status["status"], status["currentPhase"]) == ("interrupted", "step0")
    assert "'step0' was deleted" in status["taskOutcome"]["summary"]
    time.sleep(3)
    assert kubectl.json("get", "phases", "-n", namespace)["items"] == []


def test_a_pod_deleted_from_outside_is_interrupted_even_when_its_agent_exits_0(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    script = "trap 'echo bye; exit 0' TERM; while true; do sleep 0.1; done"
    kubectl.apply(execution("deleted", script), namespace)
    wait_for(
        lambda: phase_status(kubectl, namespace, "deleted-0-step0").get("status") == "running",
        what="the phase to run",
    )
    time.sleep(1)
    kubectl.run("delete", "pod", "deleted-0-step0-a1", "-n", namespace, "--wait=false")
    status = wait_finished(kubectl, namespace, "deleted")
    assert status["status"] == "interrupted"
    assert status["taskOutcome"]["terminalReason"] == "PodDeleted"


# Alone on the cluster (make test's second lane): it stops the one kubelet every test's pods
# run on, which broke whatever another worker's tests ran meanwhile.
@pytest.mark.exclusive
def test_a_slow_start_is_not_failed_by_the_pending_timeout(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    # The operator's pending timeout is 4 s here. With the kubelet stopped for 8 s the pod is
    # bound but no container starts, a wait that time ends: it must not fail the phase (nor
    # show it running: its agent has not started).
    testing.stop_kubelet()
    try:
        kubectl.apply(execution("slow-start", delivered("started late")), namespace)
        time.sleep(8)
        assert phase_status(kubectl, namespace, "slow-start-0-step0").get("status") is None
    finally:
        testing.start_kubelet()
    status = wait_finished(kubectl, namespace, "slow-start")
    assert (status["status"], status["taskOutcome"]["summary"]) == ("completed", "started late")


def test_a_restart_after_the_checkpoint_does_not_read_the_log_again(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("judged", "echo working; " + delivered("judged once")), namespace)
    wait_for(
        lambda: "run" in phase_status(kubectl, namespace, "judged-0-step0"),
        what="the run's facts to be checkpointed",
    )
    operator.kill()
    operator.start()
    status = wait_finished(kubectl, namespace, "judged")
    assert status["status"] == "completed"
    phase = phase_status(kubectl, namespace, "judged-0-step0")
    assert phase["run"]["report"]["comments"] == "judged once"
    assert "lastMessage" not in phase["run"]


def test_a_pod_deleted_before_it_was_recorded_is_interrupted_and_never_run_twice(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    # An operator that dies between creating the pod and recording it, then the pod is
    # deleted before the next one starts: the finalizer keeps the pod for it to read.
    kubectl.apply(execution("unrecorded", "sleep 30; " + delivered("ran twice")), namespace)
    phase = "unrecorded-0-step0"
    wait_for(
        lambda: phase_status(kubectl, namespace, phase).get("status") == "running",
        what="the phase to run",
    )
    operator.kill()
    forget = '[{"op": "remove", "path": "/status/podName"}]'
    kubectl.run(
        "patch", "phase", phase, "-n", namespace, "--subresource=status", "--type=json",
        "-p", forget,
    )  # fmt: skip
    kubectl.run("delete", "pod", f"{phase}-a1", "-n", namespace, "--wait=false")
    operator.start()
    status = wait_finished(kubectl, namespace, "unrecorded")
    assert status["status"] == "interrupted"
    assert status["taskOutcome"]["terminalReason"] == "PodDeleted"
    scheduled = [
        e for e in events(kubectl, namespace, "Scheduled")
        if e["involvedObject"]["name"] == f"{phase}-a1"
    ]  # fmt: skip
    assert len(scheduled) == 1
    wait_for(
        lambda: not kubectl.json("get", "pods", "-n", namespace)["items"],
        what="the pod to go once its run was recorded",
    )


def test_pods_of_an_execution_deleted_while_no_operator_ran_are_let_go(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("orphaned", "sleep 60"), namespace)
    wait_for(
        lambda: phase_status(kubectl, namespace, "orphaned-0-step0").get("status") == "running",
        what="the phase to run",
    )
    operator.kill()
    kubectl.run("delete", "execution", "orphaned", "-n", namespace, "--wait=false")
    wait_for(
        lambda: all(
            p["metadata"].get("deletionTimestamp")
            for p in kubectl.json("get", "pods", "-n", namespace)["items"]
        ),
        what="the garbage collector to delete the pod",
    )
    time.sleep(2)
    assert kubectl.json("get", "pods", "-n", namespace)["items"], "kept by its finalizer"
    operator.start()
    # Let go: its finalizer removed. The pod itself goes once its agent, which runs by now,
    # has been stopped, after its grace period.
    wait_for(
        lambda: (
            not any(
                naming.POD_FINALIZER in (p["metadata"].get("finalizers") or [])
                for p in kubectl.json("get", "pods", "-n", namespace)["items"]
            )
        ),
        what="the restarted operator to let the pod go",
    )
