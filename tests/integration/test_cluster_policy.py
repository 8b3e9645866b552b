"""Phases in a namespace with a real cluster's policy, on the local control plane.

Cases: the multi-phase example completes in a namespace that enforces PodSecurity `restricted`
and whose ResourceQuota requires cpu and memory limits (the sidecars get the operator's, the
agent the example's); there, an agent without limits or asking for privilege escalation is
blocked (config) with the quota's or PodSecurity's message; a ValidatingAdmissionPolicy that
denies pods with a given label ends the phase blocked (config) with the policy's own message
within seconds, the pod never retried; an agent image whose USER is 12345 writes its output
and HOME in both phases (the second one's directories made by the Python fetcher, the first
one's by the shell preparation); a workspace over its sizeLimit gets the pod evicted by the
kubelet's eviction manager with its own message; the API server refuses a wrong toleration,
size or class name with the schema's messages.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.testing import Kubectl
from tests.integration import namespace_policy
from tests.integration.images import BUSYBOX, UID_12345
from tests.integration.operator_fixtures import (
    REPO,
    OperatorProcess,
    phase_status,
    running,
    wait_finished,
    wait_for,
)

SIDECAR_RESOURCES = {
    "requests": {"cpu": "50m", "memory": "64Mi"},
    "limits": {"cpu": "500m", "memory": "256Mi"},
}
UID_AGENT = """\
set -eu
id
mkdir -p "$HOME/.cache"
echo cached > "$HOME/.cache/probe"
echo "home writable: $HOME"
if [ -d /workspace/artifacts/input ]; then ls /workspace/artifacts/input; fi
echo "written by $(id -u)" > "$AGENTJOBS_OUTPUT_DIR/$AGENTJOBS_PHASE.md"
echo 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "written"}'
echo TASK_RESULT_END
"""
EXAMPLE = REPO / "manifests" / "examples" / "multi-phase.yaml"


@pytest.fixture
def policed_operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator with its default restricted security and the chart's sidecar resources."""
    extra = ["--sidecar-resources", json.dumps(SIDECAR_RESOURCES)]
    process = OperatorProcess(s3_env, namespace, tmp_path / "operator.log", extra=extra)
    yield from running(process)


def _restricted_with_a_limits_quota(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted")
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "limits-required"},
        "spec": {"hard": {"limits.cpu": "8", "limits.memory": "8Gi"}},
    }
    kubectl.apply(quota, namespace)
    # Quota admission enforces a quota only once the controller has counted its usage.
    wait_for(
        lambda: (
            kubectl.json("get", "-n", namespace, "resourcequota", "limits-required")
            .get("status", {})
            .get("used")
        ),
        what="the quota's usage to be counted",
    )


def test_the_example_completes_under_restricted_pod_security_and_a_quota_requiring_limits(
    kubectl: Kubectl, namespace: str, policed_operator: OperatorProcess
) -> None:
    _restricted_with_a_limits_quota(kubectl, namespace)
    kept = []  # the example as users apply it, its pods kept so that the test can read them
    for document in yaml.safe_load_all(EXAMPLE.read_text()):
        if document and document["kind"] == "Execution":
            document["spec"].setdefault("defaults", {})["keepPods"] = True
        kept.append(document)
    kubectl.run("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(kept))
    status = wait_finished(kubectl, namespace, "fix-flaky-test", timeout=240)
    assert status["status"] == "completed", status["taskOutcome"]
    assert [p["status"] for p in status["phases"]] == ["completed"] * 3
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]
    assert len(pods) == 3
    for pod in pods:
        containers = pod["spec"]["containers"] + pod["spec"]["initContainers"]
        for container in containers:
            assert {"cpu", "memory"} <= set(container["resources"]["limits"]), container["name"]
        # The harvester and fetcher (and any other container of the operator's) get its own.
        sidecars = [c for c in containers if c["name"] != "agent"]
        assert len(sidecars) >= 2
        assert all(c["resources"] == SIDECAR_RESOURCES for c in sidecars), sidecars


@pytest.mark.parametrize(
    ("phase", "words"),
    [
        # No limits on the agent: the quota's admission names the container.
        ({}, "must specify limits.cpu for: agent"),
        (
            {
                "resources": {"limits": {"cpu": "1", "memory": "64Mi"}},
                "securityContext": {"allowPrivilegeEscalation": True},
            },
            'violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false',
        ),
    ],
)
def test_a_quota_or_pod_security_refusal_blocks_the_phase_with_its_message(
    kubectl: Kubectl,
    namespace: str,
    policed_operator: OperatorProcess,
    phase: dict[str, Any],
    words: str,
) -> None:
    _restricted_with_a_limits_quota(kubectl, namespace)
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "refused"},
        "spec": {"phases": [{"name": "work", "image": UID_12345, "prompt": "Work.", **phase}]},
    }
    kubectl.apply(execution, namespace)
    status = wait_finished(kubectl, namespace, "refused", timeout=30)
    assert status["status"] == "failed"
    [blocker] = phase_status(kubectl, namespace, "refused-0-work")["taskOutcome"]["blockers"]
    assert (blocker["type"], blocker["recoverable"]) == ("config", True)
    assert words in blocker["message"], blocker["message"]
    assert kubectl.json("get", "pods", "-n", namespace)["items"] == []


@pytest.fixture
def denying_policy(kubectl: Kubectl, namespace: str) -> Iterator[str]:
    """A ValidatingAdmissionPolicy, bound to the test's namespace, that denies the pods of
    Execution `denied` by their label; yields its message once it is in force."""
    message = "pods of Execution denied may not run in this namespace"
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "probe", "labels": {"agentjobs.io/execution": "denied"}},
        "spec": {"containers": [{"name": "c", "image": BUSYBOX}]},
    }
    with namespace_policy.refusing(
        kubectl,
        namespace,
        name=f"deny-{namespace}"[:63],
        rule={"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]},
        expression="!has(object.metadata.labels)"
        " || object.metadata.labels[?'agentjobs.io/execution'].orValue('') != 'denied'",
        message=message,
        probe=probe,
    ):
        yield message


def test_a_policy_denial_blocks_the_phase_with_the_policys_message_within_seconds(
    kubectl: Kubectl, namespace: str, policed_operator: OperatorProcess, denying_policy: str
) -> None:
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "denied"},
        "spec": {"phases": [{"name": "work", "image": UID_12345, "prompt": "Work."}]},
    }
    started = time.monotonic()
    kubectl.apply(execution, namespace)
    status = wait_finished(kubectl, namespace, "denied", timeout=30)
    elapsed = time.monotonic() - started
    print(f"the denied phase ended in {elapsed:.1f} s")
    assert elapsed < 15, f"took {elapsed:.1f} s"
    assert status["status"] == "failed"
    phase = phase_status(kubectl, namespace, "denied-0-work")
    outcome = phase["taskOutcome"]
    assert (outcome["status"], outcome["source"]) == ("blocked", "system")
    [blocker] = outcome["blockers"]
    assert blocker["type"] == "config"
    assert blocker["recoverable"] is True
    assert denying_policy in blocker["message"]
    assert "ValidatingAdmissionPolicy" in blocker["message"]
    assert outcome["terminalReason"] == "AdmissionDenied"
    assert kubectl.json("get", "pods", "-n", namespace)["items"] == []
    assert "grant it in the operator's Role" not in policed_operator.log()


def test_an_agent_running_as_uid_12345_writes_its_output_and_home(
    kubectl: Kubectl, namespace: str, policed_operator: OperatorProcess
) -> None:
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "uid"},
        "spec": {
            # Their logs are read after the end.
            "defaults": {"image": UID_12345, "command": ["sh", "-c", UID_AGENT], "keepPods": True},
            "phases": [
                {"name": "first", "prompt": "Write.", "outputs": ["first.md"]},
                {"name": "second", "prompt": "Write again.", "outputs": ["second.md"]},
            ],
        },
    }
    kubectl.apply(execution, namespace)
    status = wait_finished(kubectl, namespace, "uid", timeout=120)
    assert status["status"] == "completed", status
    for index, name in enumerate(("first", "second")):
        phase = phase_status(kubectl, namespace, f"uid-{index}-{name}")
        assert [a["path"] for a in phase["artifacts"]] == [f"{name}.md"]
        log = kubectl.run("logs", "-n", namespace, f"uid-{index}-{name}-a1", "-c", "agent").stdout
        assert "uid=12345" in log
        assert "65532" in log.split("groups=", 1)[1].splitlines()[0]  # the workspace group
        assert "home writable: /home/agentjobs" in log
    second_log = kubectl.run("logs", "-n", namespace, "uid-1-second-a1", "-c", "agent").stdout
    assert "first.md" in second_log  # the input fetched before the agent started


def test_a_workspace_over_its_size_limit_gets_the_pod_evicted(
    kubectl: Kubectl, namespace: str, policed_operator: OperatorProcess
) -> None:
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "fill"},
        "spec": {
            "phases": [
                {
                    "name": "fill",
                    "image": UID_12345,
                    "prompt": "Fill the disk.",
                    "command": ["sh", "-c"],
                    "args": ["head -c 3145728 /dev/urandom > /workspace/blob; sleep 120"],
                    "workspace": {"sizeLimit": "1Mi"},
                    "keepPods": True,  # the evicted pod is read after the end
                }
            ]
        },
    }
    kubectl.apply(execution, namespace)
    wait_finished(kubectl, namespace, "fill", timeout=60)
    pod = kubectl.json("get", "pod", "-n", namespace, "fill-0-fill-a1")["status"]
    assert pod["phase"] == "Failed"
    assert pod["reason"] == "Evicted"
    assert pod["message"] == 'Usage of EmptyDir volume "workspace" exceeds the limit "1Mi". '


def test_the_api_server_refuses_wrong_placement_with_the_schemas_messages(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    execution: dict[str, Any] = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "wrong"},
        "spec": {
            "phases": [
                {
                    "name": "p",
                    "image": BUSYBOX,
                    "prompt": "P",
                    "tolerations": [{"operator": "Exists", "value": "x"}, {"value": "y"}],
                    "workspace": {"sizeLimit": "lots"},
                    "priorityClassName": "Not_A_Name",
                }
            ]
        },
    }
    result = kubectl.run(
        "apply", "-n", namespace, "-f", "-", input=json.dumps(execution), check=False
    )
    assert result.returncode != 0
    for message in (
        "a toleration with operator Exists takes no value",
        "a toleration without a key must use operator Exists",
        "workspace.sizeLimit must be a positive size such as 10Gi",
        "spec.phases[0].priorityClassName",
    ):
        assert message in result.stderr, result.stderr
