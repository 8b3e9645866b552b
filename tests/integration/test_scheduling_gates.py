"""Phase pods held by a scheduling gate, as Kueue's plain-Pod integration holds them (R73).

A MutatingAdmissionPolicy of the test's own stands in for Kueue's webhook: it gives the
test namespace's pods that carry the label `test-gate` (set through the phase's
`podLabels`) the scheduling gate `example.com/hold`. Cases: such a pod, held for four times
the operator's pending timeout (4 s), is not failed, and its Phase shows `Queued` with the
gate's name; once the test removes the gate the phase runs to `completed` and `Queued` turns
false. `podLabels` may not set the operator's own labels (refused at apply time).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
    working_script,
)

GATE = "example.com/hold"
PENDING_TIMEOUT = 4  # the test operator's


@pytest.fixture
def gate_policy(kubectl: Kubectl, namespace: str) -> Iterator[None]:
    """Pods of the test namespace labelled `test-gate` are created with the gate."""
    name = f"hold-{namespace}"[:63]
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods"],
                    }
                ]
            },
            "matchConditions": [
                {
                    "name": "asks-to-be-held",
                    "expression": "has(object.metadata.labels)"
                    " && 'test-gate' in object.metadata.labels",
                }
            ],
            "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "mutations": [
                {
                    "patchType": "ApplyConfiguration",
                    "applyConfiguration": {
                        "expression": "Object{spec: Object.spec{schedulingGates: "
                        f'[Object.spec.schedulingGates{{name: "{GATE}"}}]}}}}'
                    },
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1beta1",
        "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
        },
    }
    kubectl.apply(policy, namespace)
    kubectl.apply(binding, namespace)
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "gate-probe", "labels": {"test-gate": "yes"}},
        "spec": {"containers": [{"name": "c", "image": BUSYBOX}]},
    }

    def in_force() -> bool:
        # The API server loads a new policy a moment after it is stored; a pod created
        # before that would not be held.
        created = kubectl.run(
            "create", "--dry-run=server", "-o", "json", "-n", namespace, "-f", "-",
            input=json.dumps(probe),
        )  # fmt: skip
        gates = json.loads(created.stdout)["spec"].get("schedulingGates") or []
        return {"name": GATE} in gates

    try:
        wait_for(in_force, what="the gate policy to be in force")
        yield
    finally:
        kubectl.run("delete", "mutatingadmissionpolicybinding,mutatingadmissionpolicy", name)


def execution(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Do it.",
                    "command": ["sh", "-c", working_script()],
                    "podLabels": labels,
                }
            ]
        },
    }


def queued(status: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions", []) if c["type"] == "Queued"), None)


def test_a_gated_pod_waits_past_the_pending_timeout_and_runs_once_ungated(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, gate_policy: None
) -> None:
    labels = {"test-gate": "yes", "kueue.x-k8s.io/queue-name": "agents"}
    kubectl.apply(execution("held", labels), namespace)
    wait_for(
        lambda: (
            (queued(phase_status(kubectl, namespace, "held-0-work")) or {}).get("status") == "True"
        ),
        what="the phase to show Queued",
    )
    pod = kubectl.json("get", "-n", namespace, "pod", "held-0-work-a1")
    assert [gate["name"] for gate in pod["spec"]["schedulingGates"]] == [GATE]
    assert pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "agents"
    time.sleep(4 * PENDING_TIMEOUT)
    status = phase_status(kubectl, namespace, "held-0-work")
    assert status["status"] == "running", status
    condition = queued(status)
    assert condition is not None
    assert (condition["status"], condition["reason"]) == ("True", "SchedulingGated")
    assert GATE in condition["message"]
    kubectl.run(
        "patch",
        "-n",
        namespace,
        "pod",
        "held-0-work-a1",
        "--type=json",
        "-p",
        '[{"op": "remove", "path": "/spec/schedulingGates"}]',
    )
    ended = wait_finished(kubectl, namespace, "held")
    assert ended["status"] == "completed", ended
    condition = queued(phase_status(kubectl, namespace, "held-0-work"))
    assert condition is not None
    assert (condition["status"], condition["reason"]) == ("False", "Ungated")


def test_pod_labels_may_not_set_the_operators_own(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    refused = kubectl.run(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(execution("own", {"agentjobs.io/phase": "other"})),
        check=False,
    )
    assert refused.returncode != 0
    assert "podLabels cannot set the operator's own labels" in refused.stderr
