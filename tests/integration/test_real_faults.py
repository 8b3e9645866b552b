"""Faults made on the real node's own components, and the verdicts they give.

- A kubelet stopped mid-run (SIGTERM to the process; its containers live on under
  containerd, as on a node whose kubelet died): the node lifecycle controller marks the node
  unreachable and taints it (a Ready kwok node beside it keeps the zone from counting as
  wholly lost), the taint eviction controller deletes the pod once its toleration runs out,
  and the phase is interrupted without waiting out the pod's grace.
- The API server's connections to the kubelet cut (`ss -K`, as a network fault or a kubelet
  restart would) while the agent's log is followed, just before its report: the report is
  still read.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from devcluster import cluster, testing
from devcluster.layout import NODE_ADDRESS, NODE_PORT
from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import AGENT_IMAGE
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)

# Alone on the cluster (make test's second lane): it cuts the real node off and taints it.
pytestmark = pytest.mark.exclusive

# How long the phase pod tolerates its node being unreachable before the taint eviction
# controller deletes it (the admission default is 300 s).
UNREACHABLE_SECONDS = 2


def execution(name: str, script: str) -> dict[str, Any]:
    return builders.shell_execution(name, script, image=AGENT_IMAGE)


def wait_running(kubectl: Kubectl, namespace: str, phase: str) -> None:
    wait_for(
        lambda: phase_status(kubectl, namespace, phase).get("status") == "running",
        timeout=120,
        what=f"{phase} to run",
    )


def test_a_stopped_kubelet_interrupts_its_phase_once_the_node_is_lost(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    manifest = execution("lost", "sleep 300")
    unreachable = {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": UNREACHABLE_SECONDS,
    }
    manifest["spec"]["defaults"]["tolerations"] = [unreachable]
    # A second node that stays Ready (a kwok one): with every node of the zone lost, the node
    # lifecycle controller assumes its own network is cut and evicts nothing.
    cluster.up_simulated_nodes()
    kubectl.apply(manifest, namespace)
    wait_running(kubectl, namespace, "lost-0-step0")
    testing.stop_kubelet()
    try:
        status = wait_finished(kubectl, namespace, "lost", timeout=120)
    finally:
        testing.start_kubelet()
    assert status["status"] == "interrupted", status
    assert status["taskOutcome"]["terminalReason"] == "DeletionByTaintManager"


def test_cut_kubelet_connections_just_before_the_report_still_give_the_report(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    script = "for i in $(seq 10 49); do echo line $i; done; sleep 6; " + builders.echo_block(
        builders.report(comments="tail kept")
    )
    kubectl.apply(execution("cut", script), namespace)
    wait_running(kubectl, namespace, "cut-0-step0")
    wait_for(
        lambda: (
            "line 49"
            in kubectl.run("logs", "cut-0-step0-a1", "-c", "agent", "-n", namespace).stdout
        ),
        what="the lines before the report",
    )
    time.sleep(1)
    killed = testing.cut_kubelet_connections()
    # The operator's follow stream was one of them: the API server proxies it to the kubelet.
    assert any(f"{NODE_ADDRESS}:{NODE_PORT}" in line for line in killed)
    status = wait_finished(kubectl, namespace, "cut", timeout=120)
    phase = phase_status(kubectl, namespace, "cut-0-step0")
    assert (status["status"], phase["report"]["comments"]) == ("completed", "tail kept")
    assert phase["run"]["transcriptBytes"] > 320
