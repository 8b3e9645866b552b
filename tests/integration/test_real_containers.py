"""Phases in real containers on the real node, under the operator's default restricted pod
security: the image's USER and runAsNonRoot honoured, a read-only root filesystem, output
written through fsGroup and stored by the harvester from the built operator image, inputs
handed on by the fetcher from that image, a memory limit's OOM kill, an eviction through the
Eviction API, and timeoutSeconds, each enforced by the kubelet and runc, not by us.
"""

from __future__ import annotations

import json
import time
from typing import Any

from minio import Minio

from devcluster.images.catalog import OPERATOR_IMAGE
from devcluster.layout import REAL_NODE_NAME
from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import AGENT_IMAGE, AGENT_UID
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)
from tests.integration.stored import stored_objects

REPORT = builders.echo_block({"success": True})


def execution(name: str, *scripts: str, **defaults: Any) -> dict[str, Any]:
    return builders.shell_execution(name, *scripts, **{"image": AGENT_IMAGE, **defaults})


def pod(kubectl: Kubectl, namespace: str, name: str) -> Any:
    return kubectl.json("get", "pod", name, "-n", namespace)


def test_the_image_user_writes_its_output_under_a_read_only_root(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    script = (
        'id -u > "$AGENTJOBS_OUTPUT_DIR/uid"; '
        'if touch /probe 2> "$AGENTJOBS_OUTPUT_DIR/touch.err"; then echo writable; '
        'else echo read-only; fi > "$AGENTJOBS_OUTPUT_DIR/root"; ' + REPORT
    )
    kubectl.apply(execution("user", script, keepPods=True), namespace)
    status = wait_finished(kubectl, namespace, "user", timeout=120)
    assert status["status"] == "completed", json.dumps(status)
    prefix = f"namespaces/{namespace}/executions/user/0-step0/attempt-1/output/"
    stored = {key.removeprefix(prefix): body for key, body in stored_objects(s3, prefix).items()}
    assert stored["uid"] == f"{AGENT_UID}\n".encode()
    assert stored["root"] == b"read-only\n"
    assert b"Read-only file system" in stored["touch.err"]
    ran = pod(kubectl, namespace, "user-0-step0-a1")
    assert ran["spec"]["nodeName"] == REAL_NODE_NAME
    assert ran["spec"]["securityContext"]["runAsNonRoot"] is True
    assert "runAsUser" not in ran["spec"]["securityContext"]  # the image's USER decided
    harvester = next(c for c in ran["spec"]["initContainers"] if c["name"] == "harvester")
    assert harvester["image"] == OPERATOR_IMAGE
    statuses = {s["name"]: s for s in ran["status"]["initContainerStatuses"]}
    # A digest only a real runtime reports: the harvester ran from the built image.
    assert (
        statuses["harvester"]["imageID"].startswith("sha256:")
        or "@sha256:" in (statuses["harvester"]["imageID"])
    )
    assert statuses["harvester"]["state"]["terminated"]["exitCode"] == 0


def test_a_root_image_is_refused_by_run_as_non_root(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    started = time.monotonic()
    kubectl.apply(execution("root", REPORT, image="busybox:1.36"), namespace)
    status = wait_finished(kubectl, namespace, "root", timeout=120)
    outcome = status["taskOutcome"]
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    assert outcome["terminalReason"] == "CreateContainerConfigError", json.dumps(outcome)
    assert outcome["blockers"][0]["type"] == "config"
    assert "non-root" in json.dumps(outcome)  # the kubelet's own words
    # Refused at once (R61), not after the pending timeout.
    assert time.monotonic() - started < 60


def test_the_fetcher_hands_the_first_phases_output_to_the_second(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    produce = 'mkdir -p "$AGENTJOBS_OUTPUT_DIR/data"; echo alpha > "$AGENTJOBS_OUTPUT_DIR/data/a"; '
    consume = 'cat /workspace/artifacts/input/data/a > "$AGENTJOBS_OUTPUT_DIR/received"; '
    kubectl.apply(execution("handoff", produce + REPORT, consume + REPORT), namespace)
    status = wait_finished(kubectl, namespace, "handoff", timeout=180)
    assert status["status"] == "completed", json.dumps(status)
    key = f"namespaces/{namespace}/executions/handoff/1-step1/attempt-1/output/received"
    assert stored_objects(s3, key) == {key: b"alpha\n"}


def test_a_memory_limit_ends_the_phase_out_of_memory(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    # tail keeps the whole last line in memory, and /dev/zero has no newline.
    resources = {"limits": {"memory": "48Mi"}, "requests": {"memory": "48Mi"}}
    kubectl.apply(execution("oom", "tail /dev/zero", resources=resources), namespace)
    status = wait_finished(kubectl, namespace, "oom", timeout=120)
    phase = phase_status(kubectl, namespace, "oom-0-step0")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    failure = phase["run"]["systemFailure"]
    assert (failure["kind"], failure["code"]) == (
        "out_of_memory",
        "OOMKilled",
    )


def agent_running(kubectl: Kubectl, namespace: str, pod: str) -> bool:
    found = kubectl.json("get", "pod", pod, "-n", namespace)
    statuses = found.get("status", {}).get("containerStatuses") or []
    return any(s["name"] == "agent" and "running" in s.get("state", {}) for s in statuses)


def test_an_eviction_through_the_eviction_api_interrupts(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    # The shell is the container's first process, which ignores SIGTERM unless it traps it:
    # without the trap the eviction's SIGTERM would do nothing and the sleep end the agent.
    kubectl.apply(execution("evicted", "trap 'exit 143' TERM; sleep 120 & wait"), namespace)
    # The agent's container itself runs: a phase shows `running` once its pod is made, and an
    # eviction while the pod is still being bound races the scheduler and the kubelet.
    wait_for(
        lambda: agent_running(kubectl, namespace, "evicted-0-step0-a1"),
        timeout=120,
        what="the agent to run",
    )
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "evicted-0-step0-a1", "namespace": namespace},
    }
    path = f"/api/v1/namespaces/{namespace}/pods/evicted-0-step0-a1/eviction"
    kubectl.run("create", "--raw", path, "-f", "-", input=json.dumps(eviction))
    status = wait_finished(kubectl, namespace, "evicted", timeout=120)
    assert status["status"] == "interrupted", json.dumps(status)


def test_timeout_seconds_stops_an_agent_that_ignores_sigterm(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    script = "trap '' TERM; while true; do sleep 1; done"
    kubectl.apply(execution("slow", script, timeoutSeconds=5, keepPods=True), namespace)
    status = wait_finished(kubectl, namespace, "slow", timeout=120)
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    assert status["taskOutcome"]["terminalReason"] == "DeadlineExceeded"
    agent = next(
        s
        for s in pod(kubectl, namespace, "slow-0-step0-a1")["status"]["containerStatuses"]
        if s["name"] == "agent"
    )
    assert agent["state"]["terminated"]["exitCode"] == 137  # SIGKILL: it ignored TERM
