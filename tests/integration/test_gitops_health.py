"""Argo CD's health check and kstatus's rules on Executions and Phases the operator wrote.

Each test runs an Execution with a real operator, takes the Execution and its Phase from
the API server (`kubectl get -o json`) while it runs and once it ended, and judges each
with charts/agentjobs/argocd/health.lua in a real Lua 5.1 (lupa) and with kstatus's own
status.Compute (built by devcluster). Cases: an Execution no operator has seen yet
(Progressing; kstatus cannot tell and says Current); one whose phase's pod waits
unscheduled (Progressing, InProgress) and then fails (Degraded, Failed); one running
(Progressing, InProgress) then cancelled (Suspended, Failed); a completed one (Healthy,
Current); one running then interrupted (Degraded, Failed).
"""

from __future__ import annotations

from typing import Any

from devcluster.testing import Kubectl
from tests import kstatus
from tests.chart.argocd_health import assess
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    MANIFESTS,
    OperatorProcess,
    apply_manifest,
    phase_status,
    start_long_phase,
    stop_execution,
    wait_finished,
    wait_for,
)


def objects(kubectl: Kubectl, namespace: str, execution: str, phase: str) -> list[Any]:
    """The Execution and its Phase as the API server holds them."""
    return [
        kubectl.json("get", "-n", namespace, "execution", execution),
        kubectl.json("get", "-n", namespace, "phase", phase),
    ]


def judged(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(Argo CD health, kstatus status) of each object."""
    verdicts = [status for status, _message in kstatus.compute(items)]
    return [(assess(obj)[0], verdict) for obj, verdict in zip(items, verdicts, strict=True)]


def test_an_execution_no_operator_has_seen_is_progressing(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    apply_manifest(kubectl, namespace, "success.yaml")
    execution = kubectl.json("get", "-n", namespace, "execution", "success")
    assert "status" not in execution
    assert assess(execution) == ("Progressing", "Waiting for the operator to report on it")
    # kstatus reads a resource without status or conditions as Current: nothing tells it
    # that a controller will report on it. Hence the Lua check's own rule.
    assert kstatus.compute([execution]) == [("Current", "Resource is current")]


def test_a_phase_whose_pod_waits_is_progressing_then_degraded_when_it_fails(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    manifest = (
        (MANIFESTS / "success.yaml")
        .read_text()
        .replace(
            f"      image: {BUSYBOX}\n",
            f"      image: {BUSYBOX}\n      nodeSelector: {{agentjobs.io/test: no-such-node}}\n",
        )
    )
    kubectl.run("apply", "-n", namespace, "-f", "-", input=manifest)
    wait_for(
        lambda: phase_status(kubectl, namespace, "success-0-write").get("podName") is not None,
        what="the phase's pod",
    )
    waiting = objects(kubectl, namespace, "success", "success-0-write")
    pod = kubectl.json("get", "-n", namespace, "pod", "success-0-write-a1")
    ended = wait_finished(kubectl, namespace, "success")
    # Caught within the test operator's pending timeout (4 s) of the pod's creation.
    assert [obj["status"]["status"] for obj in waiting] == ["running", "running"]
    assert pod["status"]["phase"] == "Pending"
    assert judged(waiting) == [("Progressing", "InProgress")] * 2
    assert (ended["status"], ended["failureClassification"]) == ("failed", "platform")
    assert (
        judged(objects(kubectl, namespace, "success", "success-0-write"))
        == [("Degraded", "Failed")] * 2
    )


def test_a_running_execution_is_progressing_and_suspended_once_cancelled(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    start_long_phase(kubectl, namespace)
    running = objects(kubectl, namespace, "cancel", "cancel-0-long")
    assert [obj["status"]["status"] for obj in running] == ["running", "running"]
    assert judged(running) == [("Progressing", "InProgress")] * 2
    stop_execution(kubectl, namespace, "cancel", "cancel")
    assert wait_finished(kubectl, namespace, "cancel")["status"] == "cancelled"
    cancelled = objects(kubectl, namespace, "cancel", "cancel-0-long")
    assert cancelled[0]["metadata"]["generation"] == cancelled[0]["status"]["observedGeneration"]
    assert judged(cancelled) == [("Suspended", "Failed")] * 2


def test_a_completed_execution_is_healthy_and_current(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "success.yaml")
    assert wait_finished(kubectl, namespace, "success")["status"] == "completed"
    completed = objects(kubectl, namespace, "success", "success-0-write")
    assert judged(completed) == [("Healthy", "Current")] * 2
    assert assess(completed[0])[1] == "completed: notes written"  # the agent's comments


def test_an_interrupted_execution_is_degraded_and_failed(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    start_long_phase(kubectl, namespace)
    stop_execution(kubectl, namespace, "cancel", "interrupt")
    assert wait_finished(kubectl, namespace, "cancel")["status"] == "interrupted"
    interrupted = objects(kubectl, namespace, "cancel", "cancel-0-long")
    assert judged(interrupted) == [("Degraded", "Failed")] * 2
    assert assess(interrupted[0])[1].startswith("interrupted")
