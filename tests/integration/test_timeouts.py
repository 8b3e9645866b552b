"""timeoutSeconds on the local control plane and its real node (R15, R21).

Cases: an agent that ignores SIGTERM and runs past `timeoutSeconds: 5` ends its phase
within 20 s of its apply as the timeout failure (failed, platform; terminal reason
DeadlineExceeded), stopped by the kubelet's liveness probe with the short grace
instead of the pod's: without storage, and with storage, where the harvester keeps
the pod's 3600 s grace and the output written before the timeout is stored; an
agent that ends in time completes, the timekeeper following it out.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

from minio import Minio

from agentjobs.kube import agent_timeout
from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
)

BUCKET = "agentjobs"
STUBBORN = (
    "trap '' TERM; "
    'echo "written before the timeout" > "$AGENTJOBS_OUTPUT_DIR/before.txt"; '
    "echo working; while true; do sleep 1; done"
)


PROMPT_AGENT = (
    'echo done > "$AGENTJOBS_OUTPUT_DIR/result.txt"; '
    'echo \'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "done"}\'; '
    "echo TASK_RESULT_END"
)


def execution(name: str, script: str = STUBBORN, timeout: int = 5) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "defaults": {"keepPods": True},  # the tests read the pods after the end
            "phases": [
                {
                    "name": "slow",
                    "image": BUSYBOX,
                    "prompt": "Take your time.",
                    "timeoutSeconds": timeout,
                    "command": ["sh", "-c", script],
                }
            ],
        },
    }


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def run_to_timeout(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any]:
    """Apply the stubborn phase, wait for its end, and check what makes it a timeout."""
    begun = time.monotonic()
    kubectl.apply(execution(name), namespace)
    status = wait_finished(kubectl, namespace, name, timeout=40)
    elapsed = time.monotonic() - begun
    print(f"{name}: the phase ended {elapsed:.1f} s after it was applied")
    assert elapsed <= 20, f"the phase took {elapsed:.1f} s to end"
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    phase = phase_status(kubectl, namespace, f"{name}-0-slow")
    outcome = phase["taskOutcome"]
    assert (outcome["status"], outcome["terminalReason"]) == ("failed", "DeadlineExceeded")
    assert "timeoutSeconds (5 s)" in outcome["summary"]
    pod = kubectl.json("get", "pod", "-n", namespace, f"{name}-0-slow-a1")
    [agent] = [s for s in pod["status"]["containerStatuses"] if s["name"] == "agent"]
    ended = agent["state"]["terminated"]
    assert (ended["exitCode"], ended["reason"]) == (137, "Error")  # SIGKILL: it ignored TERM
    ran = (_time(ended["finishedAt"]) - _time(ended["startedAt"])).total_seconds()
    # The probe's first run at 5 s (a period late at most), then the short grace.
    assert 5 <= ran <= 5 + 1 + agent_timeout.STOP_GRACE_SECONDS + 1
    return pod


def test_r21_without_storage_a_stubborn_agent_is_stopped_at_its_timeout(
    kubectl: Kubectl, namespace: str, crds: None, s3_env: dict[str, str], tmp_path: Path
) -> None:
    without_storage = {k: v for k, v in s3_env.items() if not k.startswith("AGENTJOBS_S3_")}
    operator = OperatorProcess(without_storage, namespace, tmp_path / "operator.log")
    operator.start()
    try:
        pod = run_to_timeout(kubectl, namespace, "bare")
    finally:
        operator.stop()
        print(operator.log()[-20000:])
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    assert grace == agent_timeout.STOP_GRACE_SECONDS
    assert [c["name"] for c in pod["spec"]["containers"]] == ["agent"]


def test_r21_with_storage_the_agent_is_stopped_and_the_harvester_stores_its_output(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    pod = run_to_timeout(kubectl, namespace, "stored")
    assert pod["spec"]["terminationGracePeriodSeconds"] == 3600
    phase = phase_status(kubectl, namespace, "stored-0-slow")
    assert "before.txt" in {artifact["path"] for artifact in phase.get("artifacts", [])}
    key = f"namespaces/{namespace}/executions/stored/0-slow/attempt-1/output/before.txt"
    response = s3.get_object(BUCKET, key)
    try:
        assert response.read() == b"written before the timeout\n"
    finally:
        response.close()
        response.release_conn()
    statuses = {s["name"]: s for s in pod["status"]["initContainerStatuses"]}
    assert statuses["harvester"]["state"]["terminated"]["exitCode"] == 0
    [keeper] = [s for s in pod["status"]["containerStatuses"] if s["name"] != "agent"]
    assert keeper["state"]["terminated"]["exitCode"] == 0


def test_an_agent_that_ends_in_time_completes_and_the_timekeeper_goes_with_it(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    begun = time.monotonic()
    kubectl.apply(execution("prompt", PROMPT_AGENT, timeout=60), namespace)
    status = wait_finished(kubectl, namespace, "prompt", timeout=40)
    elapsed = time.monotonic() - begun
    print(f"prompt: the phase ended {elapsed:.1f} s after it was applied")
    assert status["status"] == "completed"
    pod = kubectl.json("get", "pod", "-n", namespace, "prompt-0-slow-a1")
    by_name = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert by_name["agent"]["state"]["terminated"]["exitCode"] == 0
    keeper = by_name[agent_timeout.TIMEKEEPER_CONTAINER]["state"]["terminated"]
    assert keeper["exitCode"] == 0
    # Far from the timeout: the timekeeper left a few seconds after the agent had.
    assert elapsed < 20
    ended = by_name["agent"]["state"]["terminated"]["finishedAt"]
    # Its 3 s of silence after the last heartbeat, the heartbeat's 1 s period, times cut to
    # the second, and a busy kubelet's late probes: well under the minute of the timeout.
    assert (_time(keeper["finishedAt"]) - _time(ended)).total_seconds() <= 10
