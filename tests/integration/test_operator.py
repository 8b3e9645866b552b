"""The operator on the real local control plane (issue: Execution and Phase resources).

Each test applies an Execution from `manifests/` with kubectl, lets a real
`agentjobs run` process (limited to the test's namespace) drive it, and
reads the statuses back with `kubectl get -o json`. Cases: a success report;
a failure with each failure_reason; an unreadable report; no report; a
non-zero exit (a timeout: test_timeouts.py); a missing Secret; an unknown image; cancellation; a
two-phase execution whose first phase fails; an operator killed with SIGKILL
mid-phase and restarted; a prompt from a ConfigMap; invalid manifests refused
by the API server with its message.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentjobs.kube import prompts
from agentjobs.kube.naming import LABEL_PHASE
from devcluster.testing import Kubectl
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


def test_a_success_report_completes_the_execution(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "success.yaml")
    kubectl.run(
        "wait",
        "-n",
        namespace,
        "--for=condition=Complete",
        "execution/success",
        "--timeout=60s",
        timeout=70,
    )
    status = kubectl.json("get", "-n", namespace, "execution", "success")["status"]
    assert status["status"] == "completed"
    assert "failureClassification" not in status
    assert status["reportedSideEffects"] == "succeeded"
    assert (status["deliverableProduced"], status["artifactCount"]) == (True, 1)
    assert status["phases"] == [
        {
            "name": "write",
            "status": "completed",
            "deliverableRecovered": False,
            "reportedSideEffects": "succeeded",
        }
    ]
    assert status["taskOutcome"]["source"] == "agent"
    assert status["taskOutcome"]["status"] == "success"
    phase = phase_status(kubectl, namespace, "success-0-write")
    assert phase["report"]["state"] == "success"
    assert phase["report"]["comments"] == "notes written"
    assert (phase["exitCode"], phase["streamIntact"]) == (0, True)
    assert phase["podName"] == "success-0-write-a1"
    conditions = {c["type"]: c["status"] for c in status["conditions"]}
    assert conditions == {
        "Running": "False",
        "Complete": "True",
        "Failed": "False",
        "Finished": "True",
        "Reconciling": "False",
        "Stalled": "False",
        "Ready": "True",
    }
    log = kubectl.run("logs", "-n", namespace, "success-0-write-a1").stdout
    assert "prompt: Write the release notes." in log
    assert "instruction present" in log
    reasons = kubectl.run(
        "get", "events", "-n", namespace, "-o", "jsonpath={.items[*].reason}"
    ).stdout.split()
    assert {"Running", "Complete"} <= set(reasons)
    # A prompt this small travels in the pod itself: the phase made no ConfigMap.
    made = kubectl.json("get", "configmaps", "-n", namespace, "-l", LABEL_PHASE)["items"]
    assert made == []


@pytest.mark.parametrize("size", [100, 40_000])
def test_the_agent_reads_its_whole_prompt_from_the_pod_or_past_16_kib_from_a_config_map(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, size: int
) -> None:
    prompt = ("Read all of this. " * (size // 18 + 1))[:size]
    expected = hashlib.sha256(prompts.compose_prompt(prompt).encode()).hexdigest()
    script = (
        'echo "prompt sha256: $(sha256sum "$AGENTJOBS_PROMPT_FILE" | cut -d" " -f1)"; '
        'cp "$AGENTJOBS_PROMPT_FILE" "$AGENTJOBS_OUTPUT_DIR/prompt.md"; '
        'echo \'TASK_RESULT: {"success": true, "side_effects": "none"}\'; '
        "echo TASK_RESULT_END"
    )
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "sized"},
        "spec": {
            "defaults": {"keepPods": True},
            "phases": [
                {
                    "name": "read",
                    "image": BUSYBOX,
                    "prompt": prompt,
                    "command": ["sh", "-c", script],
                }
            ],
        },
    }
    kubectl.apply(execution, namespace)
    assert wait_finished(kubectl, namespace, "sized")["status"] == "completed"
    log = kubectl.run("logs", "-n", namespace, "sized-0-read-a1").stdout
    assert f"prompt sha256: {expected}" in log
    made = kubectl.json("get", "configmaps", "-n", namespace, "-l", LABEL_PHASE)["items"]
    assert [m["metadata"]["name"] for m in made] == (
        [] if size < 16_000 else ["sized-0-read-prompt"]
    )


@pytest.mark.parametrize(
    ("reason", "classification", "reported"),
    [
        ('"task"', "correct_refusal", "task"),
        ('"platform"', "correct_refusal", "platform"),
        ('"refused"', "correct_refusal", "refused"),
        ('"unknown"', "unclassified", "unknown"),
        ('"a sentence, not a word"', "correct_refusal", None),
    ],
)
def test_a_failure_report_fails_with_the_agents_word_quoted(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    reason: str,
    classification: str,
    reported: str | None,
) -> None:
    manifest = (MANIFESTS / "failure.yaml").read_text().replace("REASON", reason)
    kubectl.run("apply", "-n", namespace, "-f", "-", input=manifest)
    status = wait_finished(kubectl, namespace, "failure")
    assert status["status"] == "failed"
    assert status["failureClassification"] == classification
    assert status.get("reportedFailureReason") == reported
    assert status["taskOutcome"]["source"] == "agent"
    assert status["deliverableProduced"] is False


def test_an_unreadable_report_fails_as_platform(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "unreadable.yaml")
    status = wait_finished(kubectl, namespace, "unreadable")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    phase = phase_status(kubectl, namespace, "unreadable-0-sloppy")
    assert phase["report"]["state"] == "unreadable"
    assert "not a JSON boolean" in phase["report"]["warnings"][0]
    assert phase["taskOutcome"]["terminalReason"] == "unreadable_report"


def test_no_report_on_a_clean_exit_completes(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "no-report.yaml")
    status = wait_finished(kubectl, namespace, "no-report")
    assert status["status"] == "completed"
    phase = phase_status(kubectl, namespace, "no-report-0-quiet")
    assert phase["report"]["state"] == "not_reported"
    assert phase["taskOutcome"]["source"] == "system"


def test_a_non_zero_exit_fails_as_platform_whatever_the_report(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "non-zero-exit.yaml")
    status = wait_finished(kubectl, namespace, "non-zero-exit")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    phase = phase_status(kubectl, namespace, "non-zero-exit-0-crash")
    assert (phase["exitCode"], phase["report"]["state"]) == (3, "success")
    assert phase["taskOutcome"]["terminalReason"] == "exit_code_3"


def test_a_missing_secret_blocks_the_phase_and_asks_the_user(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "missing-secret.yaml")
    status = wait_finished(kubectl, namespace, "missing-secret")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    outcome = status["taskOutcome"]
    assert (outcome["status"], outcome["source"]) == ("blocked", "system")
    assert outcome["needsUserAction"] is True
    assert outcome["terminalReason"] == "CreateContainerConfigError"
    assert "github-token" in outcome["blockers"][0]["message"]


def test_an_unknown_image_blocks_the_phase(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "unknown-image.yaml")
    status = wait_finished(kubectl, namespace, "unknown-image")
    outcome = status["taskOutcome"]
    assert (status["status"], outcome["status"]) == ("failed", "blocked")
    assert outcome["terminalReason"] in ("ErrImagePull", "ImagePullBackOff")
    assert outcome["blockers"][0]["type"] == "config"


def test_cancel_stops_the_running_pod_and_ends_the_execution_cancelled(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    start_long_phase(kubectl, namespace)
    stop_execution(kubectl, namespace, "cancel", "cancel")
    status = wait_finished(kubectl, namespace, "cancel")
    assert status["status"] == "cancelled"
    assert "failureClassification" not in status
    assert phase_status(kubectl, namespace, "cancel-0-long")["status"] == "cancelled"
    phases = kubectl.json("get", "phases", "-n", namespace)["items"]
    assert [p["metadata"]["name"] for p in phases] == ["cancel-0-long"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Finished"]["reason"] == "Cancelled"


def test_when_phase_one_fails_phase_two_never_starts(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "two-phases-first-fails.yaml")
    status = wait_finished(kubectl, namespace, "first-fails")
    assert (status["status"], status["currentPhase"]) == ("failed", "first")
    assert status["reportedFailureReason"] == "task"
    phases = kubectl.json("get", "phases", "-n", namespace)["items"]
    assert [p["metadata"]["name"] for p in phases] == ["first-fails-0-first"]
    assert len(kubectl.json("get", "pods", "-n", namespace)["items"]) == 1


def test_an_operator_killed_mid_phase_and_restarted_runs_nothing_twice(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "restart.yaml")
    wait_for(
        lambda: (
            "step 2"
            in kubectl.run("logs", "-n", namespace, "restart-0-slow-a1", check=False).stdout
        ),
        what="the first phase to be half-way",
    )
    operator.kill()
    operator.start()
    status = wait_finished(kubectl, namespace, "restart")
    assert status["status"] == "completed"
    assert [p["status"] for p in status["phases"]] == ["completed", "completed"]
    first = phase_status(kubectl, namespace, "restart-0-slow")
    assert (first["report"]["comments"], first["streamIntact"]) == ("counted", True)
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]
    assert sorted(p["metadata"]["name"] for p in pods) == [
        "restart-0-slow-a1",
        "restart-1-after-a1",
    ]
    assert all(p["status"]["containerStatuses"][0]["restartCount"] == 0 for p in pods)


def test_a_prompt_can_come_from_a_config_map(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "prompt-from.yaml")
    assert wait_finished(kubectl, namespace, "prompt-from")["status"] == "completed"
    log = kubectl.run("logs", "-n", namespace, "prompt-from-0-review-a1").stdout
    assert "first line: Review the pull request carefully." in log


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("no-phases.yaml", "should have at least 1 items"),
        ("duplicate-names.yaml", "phase names must be unique within an execution"),
        ("wrong-type.yaml", "must be of type integer"),
        ("bad-name.yaml", "must be a DNS label"),
        ("no-image.yaml", "every phase needs an image"),
        ("prompt-and-prompt-from.yaml", "set exactly one of prompt and promptFrom"),
        ("unknown-field.yaml", 'unknown field "spec.phases[0].timeout"'),
    ],
)
def test_invalid_manifests_are_refused_with_the_api_servers_message(
    kubectl: Kubectl, namespace: str, crds: None, manifest: str, message: str
) -> None:
    result = kubectl.run(
        "apply", "-n", namespace, "-f", str(MANIFESTS / "invalid" / manifest), check=False
    )
    assert result.returncode != 0
    assert message in result.stderr
    assert kubectl.json("get", "executions", "-n", namespace)["items"] == []


def test_manifests_are_yaml_files_a_user_could_apply() -> None:
    assert all(path.suffix == ".yaml" for path in Path(MANIFESTS).rglob("*") if path.is_file())


def test_phase_pods_are_hardened_and_an_execution_may_relax_the_hardening(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    # busybox as its image has it: root, which the default pod security refuses.
    as_root = (
        (MANIFESTS / "no-report.yaml")
        .read_text()
        .replace(f"image: {BUSYBOX}", "image: busybox:1.36")
    )
    kubectl.run("apply", "-n", namespace, "-f", "-", input=as_root)
    status = wait_finished(kubectl, namespace, "no-report")
    outcome = status["taskOutcome"]
    assert (status["status"], outcome["status"], outcome["needsUserAction"]) == (
        "failed",
        "blocked",
        True,
    )
    assert "runAsNonRoot" in outcome["summary"]
    relaxed = as_root.replace("name: no-report", "name: relaxed").replace(
        "      image: busybox:1.36",
        "      image: busybox:1.36\n      podSecurityContext: {runAsNonRoot: false}",
    )
    kubectl.run("apply", "-n", namespace, "-f", "-", input=relaxed)
    assert wait_finished(kubectl, namespace, "relaxed")["status"] == "completed"
    pod = kubectl.json("get", "pod", "-n", namespace, "relaxed-0-quiet-a1")
    agent = pod["spec"]["containers"][0]
    assert agent["securityContext"]["readOnlyRootFilesystem"] is True
    assert agent["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert pod["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
