"""Clean-up on the local cluster: finished Executions by their TTL, finished phases' pods.

A real `agentjobs run` with storage:
- an Execution with `ttlSecondsAfterFinished: 5` is gone 5-15 s after it finished, and so is
  everything it owned (Phases, pods, ConfigMaps, Secrets): the namespace is left as it was;
- an ended phase's pods are deleted once its status is written (their logs are stored), unless
  the phase sets `keepPods: true`.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, wait_finished, wait_for

REPORT = builders.report(comments="notes written")


def execution(name: str, **spec: Any) -> dict[str, Any]:
    script = 'echo "# Notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"; ' + builders.echo_block(REPORT)
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "phases": [
                {"name": "write", "image": BUSYBOX, "prompt": "Write.",
                 "command": ["sh", "-c"], "args": [script]},
                {"name": "check", "image": BUSYBOX, "prompt": "Check.",
                 "command": ["sh", "-c"], "args": [script]},
            ],
        },
    }  # fmt: skip


def names(kubectl: Kubectl, namespace: str, kind: str) -> set[str]:
    items = kubectl.json("get", kind, "-n", namespace)["items"]
    return {item["metadata"]["name"] for item in items}


def test_an_execution_is_deleted_with_all_it_owned_once_its_ttl_has_passed(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    before = {kind: names(kubectl, namespace, kind) for kind in ("configmaps", "secrets")}
    kubectl.apply(execution("short-lived", ttlSecondsAfterFinished=5), namespace)
    status = wait_finished(kubectl, namespace, "short-lived")
    assert status["status"] == "completed"
    finished = datetime.fromisoformat(status["finishedAt"])
    assert names(kubectl, namespace, "phases") == {"short-lived-0-write", "short-lived-1-check"}

    def gone() -> bool:
        return not names(kubectl, namespace, "executions")

    wait_for(gone, timeout=30, what="the Execution to be deleted")
    deleted_after = (datetime.now(UTC) - finished).total_seconds()
    assert 5 <= deleted_after <= 15, deleted_after
    wait_for(
        lambda: not names(kubectl, namespace, "phases") and not names(kubectl, namespace, "pods"),
        timeout=30,
        what="its Phases and pods to go",
    )
    assert {kind: names(kubectl, namespace, kind) for kind in before} == before


def test_an_ended_phases_pods_are_deleted_unless_it_keeps_them(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("tidy"), namespace)
    kubectl.apply(execution("kept", defaults={"keepPods": True}), namespace)
    assert wait_finished(kubectl, namespace, "tidy")["status"] == "completed"
    assert wait_finished(kubectl, namespace, "kept")["status"] == "completed"
    wait_for(
        lambda: not {p for p in names(kubectl, namespace, "pods") if p.startswith("tidy-")},
        timeout=30,
        what="tidy's pods to be deleted",
    )
    time.sleep(2)  # kept's pods would be going by now
    kept = {p for p in names(kubectl, namespace, "pods") if p.startswith("kept-")}
    assert kept == {"kept-0-write-a1", "kept-1-check-a1"}
    assert names(kubectl, namespace, "phases") >= {"tidy-0-write", "tidy-1-check"}
