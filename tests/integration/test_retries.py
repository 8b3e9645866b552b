"""Retries by failure class on the local cluster (R45-R47).

A real `agentjobs run` with storage runs one-phase Executions whose agent is
a shell script that reads AGENTJOBS_ATTEMPT:

- one that exits 1 on attempt 1 and completes on attempt 2, under
  `retry: {limit: 2}`, ends completed with both attempts recorded; only
  attempt 2's artifact is linked, while attempt 1's files stay in storage
  under `attempt-1`;
- one that reported `side_effects: succeeded` before it failed is not
  retried, and its attempt record says why; a refusal is never retried.
"""

from __future__ import annotations

from typing import Any

from minio import Minio

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, phase_status, wait_finished
from tests.integration.stored import stored_objects

RETRY = {"limit": 2, "backoffSeconds": 1}


def report(**fields: Any) -> str:
    return builders.echo_block(fields)


def execution(name: str, script: str) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "defaults": {"retry": RETRY, "keepPods": True},  # the pods show each attempt
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Do the work.",
                    "command": ["sh", "-c"],
                    "args": [script],
                }
            ],
        },
    }


def pods_of(kubectl: Kubectl, namespace: str, phase: str) -> list[str]:
    listed = kubectl.json("get", "pods", "-n", namespace, "-l", f"agentjobs.io/phase={phase}")
    return sorted(pod["metadata"]["name"] for pod in listed["items"])


def test_a_failed_attempt_is_retried_and_only_the_last_attempts_work_is_linked(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    script = (
        'if [ "$AGENTJOBS_ATTEMPT" = 1 ]; then '
        'echo draft > "$AGENTJOBS_OUTPUT_DIR/draft.md"; echo "the tool crashed"; exit 1; fi; '
        'echo "# Final" > "$AGENTJOBS_OUTPUT_DIR/final.md"; '
        "echo 'I wrote the final notes with every change listed.'; "
        + report(success=True, side_effects="none", comments="final notes written")
    )
    kubectl.apply(execution("flaky", script), namespace)
    status = wait_finished(kubectl, namespace, "flaky", timeout=90)
    assert status["status"] == "completed"

    phase = phase_status(kubectl, namespace, "flaky-0-work")
    assert phase["status"] == "completed" and phase["attempt"] == 2
    first, second = phase["attempts"]
    assert (first["number"], first["status"], first["failureClassification"]) == (
        1, "failed", "platform",
    )  # fmt: skip
    assert (first["exitCode"], first["podName"]) == (1, "flaky-0-work-a1")
    assert first["reason"] == "platform: retried as attempt 2 after 1 s (retry 1 of 2)"
    assert (second["number"], second["status"], second["podName"]) == (
        2, "completed", "flaky-0-work-a2",
    )  # fmt: skip
    assert [a["path"] for a in phase["artifacts"]] == ["final.md"]
    assert all("/attempt-2/" in a["url"] for a in phase["artifacts"])
    assert pods_of(kubectl, namespace, "flaky-0-work") == ["flaky-0-work-a1", "flaky-0-work-a2"]

    root = f"namespaces/{namespace}/executions/flaky/0-work"
    stored = stored_objects(s3, root)
    assert stored[f"{root}/attempt-1/output/draft.md"] == b"draft\n"  # each attempt's own files
    assert stored[f"{root}/attempt-2/output/final.md"] == b"# Final\n"
    assert f"{root}/attempt-2/output/draft.md" not in stored


def test_external_writes_and_refusals_are_not_retried_and_say_why(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    wrote = (
        report(success=True, side_effects="succeeded", comments="pushed the branch") + "; exit 1"
    )
    refused = report(success=False, failure_reason="refused", comments="I will not do this.")
    kubectl.apply(execution("pushed", wrote), namespace)
    kubectl.apply(execution("refused", refused), namespace)

    pushed = wait_finished(kubectl, namespace, "pushed", timeout=90)
    assert (pushed["status"], pushed["failureClassification"]) == ("failed", "platform")
    (record,) = phase_status(kubectl, namespace, "pushed-0-work")["attempts"]
    assert record["reason"].startswith("not retried: the agent reported side_effects succeeded")
    assert "retry.evenAfterSideEffects" in record["reason"]
    assert pods_of(kubectl, namespace, "pushed-0-work") == ["pushed-0-work-a1"]

    refusal = wait_finished(kubectl, namespace, "refused", timeout=90)
    assert refusal["failureClassification"] == "correct_refusal"
    (record,) = phase_status(kubectl, namespace, "refused-0-work")["attempts"]
    assert record["reason"] == "not retried: the agent refused the task (correct_refusal)"
    assert pods_of(kubectl, namespace, "refused-0-work") == ["refused-0-work-a1"]
