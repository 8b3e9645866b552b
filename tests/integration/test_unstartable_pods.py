"""R61 on the local cluster: a phase whose pod cannot start ends failed with the
container's own words, instead of waiting silently (issue 22: a harvester whose binary was
missing sat in Init:CrashLoopBackOff for 5 minutes while the operator said nothing).

Real mechanisms: the operator's sidecar image is `busybox`, which has no `harvest`, so the
node cannot start the harvester (StartError, restarted with the node's back-off); and a
hand-made Phase whose inputs manifest does not match its SHA-256, so the fetcher exits 1
saying so. Cases: the crash-looping harvester ends its phase at its third failure, long
before a 120 s pending timeout, and at a 4 s pending timeout before its third, the phase's
Running condition saying meanwhile what stands in the way; the failed fetcher ends its
phase at once with the fetcher's own error (its log tail, FallbackToLogsOnError). Each
failure is the phase's error, its blocker and a Warning Event on the Phase.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from devcluster.demo_diagnosis import where_it_stands
from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
)
from tests.integration.stored import BUCKET

SUCCEEDS = (
    'echo done > "$AGENTJOBS_OUTPUT_DIR/result.txt"; '
    'echo \'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "done"}\'; '
    "echo TASK_RESULT_END"
)


def _execution(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Write a result.",
                    "command": ["sh", "-c", SUCCEEDS],
                }
            ]
        },
    }


def _wait_for_end(
    kubectl: Kubectl, namespace: str, phase: str, timeout: float
) -> tuple[dict[str, Any], set[str], float]:
    """The phase's status once it has finished, every Running message seen on the way, and
    how long it took; where the phase and its pods stand when it does not finish."""
    begun = time.monotonic()
    running: set[str] = set()
    while time.monotonic() - begun < timeout:
        status = _status_if_any(kubectl, namespace, phase)
        for condition in status.get("conditions") or []:
            if condition["type"] == "Running" and condition["status"] == "True":
                running.add(condition["message"])
        if status.get("finishedAt"):
            return status, running, time.monotonic() - begun
        time.sleep(0.5)
    execution = {"metadata": {"name": phase}, "status": {}}
    phases = kubectl.json("get", "phases", "-n", namespace)["items"]
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]
    raise AssertionError(
        f"{phase} did not finish in {timeout:.0f} s:\n"
        + "\n".join(where_it_stands(execution, phases, pods))
    )


def _status_if_any(kubectl: Kubectl, namespace: str, phase: str) -> dict[str, Any]:
    """The phase's status, empty until the Execution's reconciler has created it."""
    found = kubectl.run("get", "phase", "-n", namespace, phase, "-o", "json", check=False)
    return json.loads(found.stdout).get("status", {}) if found.returncode == 0 else {}


def _warning_events(kubectl: Kubectl, namespace: str, phase: str) -> list[str]:
    selector = f"involvedObject.kind=Phase,involvedObject.name={phase},type=Warning"
    events = kubectl.json("get", "events", "-n", namespace, "--field-selector", selector)
    return [str(event.get("message")) for event in events["items"]]


def _events_eventually(kubectl: Kubectl, namespace: str, phase: str, words: str) -> list[str]:
    deadline = time.monotonic() + 20  # kopf posts events from a queue of its own
    while True:
        messages = _warning_events(kubectl, namespace, phase)
        if any(words in message for message in messages) or time.monotonic() > deadline:
            return messages
        time.sleep(0.5)


@pytest.mark.parametrize(
    ("pending_timeout", "failures", "within"),
    # The kubelet's back-off starts at 1 s: by a 4 s timeout it may have tried once or twice.
    [(120, "failed 3 times", 90.0), (4, "failed (once|2 times)", 25.0)],
    ids=["third-failure", "pending-timeout"],
)
def test_r61_a_harvester_that_cannot_start_ends_its_phase_with_the_nodes_words(
    kubectl: Kubectl,
    namespace: str,
    crds: None,
    s3_env: dict[str, str],
    tmp_path: Path,
    pending_timeout: int,
    failures: str,
    within: float,
) -> None:
    flags = ["--image", BUSYBOX, "--pending-timeout", str(pending_timeout)]
    operator = OperatorProcess(s3_env, namespace, tmp_path / "operator.log", flags)
    operator.start()
    try:
        kubectl.apply(_execution("nosidecar"), namespace)
        status, running, took = _wait_for_end(kubectl, namespace, "nosidecar-0-work", within)
    finally:
        operator.stop()
        print(operator.log()[-20000:])
    print(f"the phase ended {took:.1f} s after it was applied")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    outcome = status["taskOutcome"]
    assert outcome["terminalReason"] == "CrashLoopBackOff", outcome
    message = outcome["summary"]
    assert re.match(f"the harvester container {failures} before the agent started", message)
    assert "harvest" in message.split("(StartError)", 1)[1], message  # what could not start
    assert outcome["blockers"][0]["message"] == message
    if pending_timeout > 4:  # long enough a wait to be seen
        assert any(
            m.startswith("nosidecar-0-work-a1 has not started: the harvester container failed")
            for m in running
        ), running
    events = _events_eventually(kubectl, namespace, "nosidecar-0-work", message)
    assert message in events, events


def test_r61_a_fetcher_that_fails_ends_its_phase_at_once_with_its_own_error(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    previous = f"namespaces/{namespace}/executions/tampered/0-draft/attempt-1"
    if not s3.bucket_exists(BUCKET):
        s3.make_bucket(BUCKET)
    manifest = json.dumps({"version": 1, "artifacts": []}).encode()
    s3.put_object(BUCKET, f"{previous}/artifacts.json", io.BytesIO(manifest), len(manifest))
    wrong = hashlib.sha256(b"another manifest").hexdigest()
    phase = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "tampered-1-use"},
        "spec": {
            "executionName": "tampered",
            "index": 1,
            "name": "use",
            "image": BUSYBOX,
            "prompt": "Use your inputs.",
            "command": ["sh", "-c", SUCCEEDS],
            "inputs": {
                "manifest": f"s3://{BUCKET}/{previous}/artifacts.json",
                "sha256": wrong,
                "count": 0,
            },
        },
    }
    kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(phase))
    status, _, took = _wait_for_end(kubectl, namespace, "tampered-1-use", 60)
    print(f"the phase ended {took:.1f} s after it was applied")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    outcome = status["taskOutcome"]
    assert outcome["terminalReason"] == "InitContainerFailed", outcome
    message = outcome["summary"]
    assert message.startswith(
        "the fetch-inputs container failed before the agent started, the last time with "
        "exit code 1 (Error): "
    ), message
    assert "does not match its recorded SHA-256" in message  # the fetcher's own words
    assert f"expected {wrong}" in message
    events = _events_eventually(kubectl, namespace, "tampered-1-use", message)
    assert message in events, events
