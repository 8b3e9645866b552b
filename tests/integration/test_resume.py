"""R48 on the local cluster: `agentjobs resume` of a three-phase Execution failed at phase 2.

Cases: the resumed Execution has no Phase (nor pod) for the inherited phase 1,
which it lists with ``inheritedFrom``; phase 2 reads phase 1's files from the
parent's storage under artifacts/input; it completes, and its R23-R26 fields
cover phases 2-3 only (phase 1's side effects and artifacts stay the parent's);
the parent's status and resourceVersion are unchanged; the API server refuses a
change of resumeFrom; resuming a parent that completed, or does not exist, is
refused by the CLI with a clear error; an Execution applied with a resumeFrom
whose parent is missing, or whose inherited phase was changed, fails with the
reason and runs nothing.
"""

from __future__ import annotations

import subprocess
from typing import Any

from minio import Minio

from devcluster.testing import Kubectl
from tests.integration.operator_fixtures import (
    AGENTJOBS,
    OperatorProcess,
    apply_manifest,
    wait_finished,
)
from tests.integration.stored import stored_objects


def resume(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTJOBS), "resume", *args], env=env, capture_output=True, text=True, timeout=60
    )


def phases_of(kubectl: Kubectl, namespace: str, execution: str) -> list[Any]:
    listing = kubectl.json(
        "get", "-n", namespace, "phases", "-l", f"agentjobs.io/execution={execution}"
    )
    return sorted(item["spec"]["name"] for item in listing["items"])


def test_r48_a_resumed_execution_runs_only_what_its_parent_did_not_finish(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    s3_env: dict[str, str],
) -> None:
    apply_manifest(kubectl, namespace, "resume.yaml")
    failed = wait_finished(kubectl, namespace, "notes", timeout=120)
    assert (failed["status"], failed["currentPhase"]) == ("failed", "review")
    parent_before = kubectl.json("get", "-n", namespace, "execution", "notes")

    done = resume(s3_env, f"{namespace}/notes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"execution {namespace}/notes-r1 created, resuming notes: "
        "inherits draft (from notes); runs review, publish"
    )
    status = wait_finished(kubectl, namespace, "notes-r1", timeout=120)
    assert status["status"] == "completed", status
    assert [(p["name"], p["status"], p.get("inheritedFrom")) for p in status["phases"]] == [
        ("draft", "completed", "notes"),
        ("review", "completed", None),
        ("publish", "completed", None),
    ]
    resumed = kubectl.json("get", "-n", namespace, "execution", "notes-r1")
    assert resumed["spec"]["resumeFrom"] == {"name": "notes"}
    assert status["resumedFrom"]["uid"] == parent_before["metadata"]["uid"]
    # Phase 1 was not run again: no Phase, no pod, no stored object of the resumed one for it.
    assert phases_of(kubectl, namespace, "notes-r1") == ["publish", "review"]
    pods = kubectl.json("get", "-n", namespace, "pods")["items"]
    assert not [p for p in pods if p["metadata"]["name"].startswith("notes-r1-0-")]
    root = f"namespaces/{namespace}/executions/notes-r1/"
    stored = stored_objects(s3, root)
    assert not [key for key in stored if key.startswith(root + "0-")]
    # Phase 2 received phase 1's file from the parent's storage.
    review = kubectl.json("get", "-n", namespace, "phase", "notes-r1-1-review")
    assert review["spec"]["inputs"]["manifest"].startswith(
        f"s3://agentjobs/namespaces/{namespace}/executions/notes/0-draft/attempt-1/"
    )
    reviewed = stored[f"{root}1-review/attempt-1/output/reviewed.md"]
    assert reviewed == b"draft by notes\n"
    # R23-R26 (R27): phases 2-3 only; draft's "succeeded" and its two files stay the parent's.
    assert status["reportedSideEffects"] == "none"
    assert (status["deliverableProduced"], status["artifactCount"]) == (True, 2)
    assert status.get("reportedFailureReason") is None
    assert status["taskOutcome"]["status"] == "success"
    # The parent is left as it was.
    parent_after = kubectl.json("get", "-n", namespace, "execution", "notes")
    assert parent_after["status"] == parent_before["status"]
    assert (
        parent_after["metadata"]["resourceVersion"] == parent_before["metadata"]["resourceVersion"]
    )
    assert phases_of(kubectl, namespace, "notes") == ["draft", "review"]

    # What it resumes from cannot change, nor be taken away.
    for patch in ('{"spec":{"resumeFrom":{"name":"other"}}}', '{"spec":{"resumeFrom":null}}'):
        changed = kubectl.run(
            "patch",
            "-n",
            namespace,
            "execution",
            "notes-r1",
            "--type=merge",
            "-p",
            patch,
            check=False,
        )
        assert changed.returncode != 0
        assert "resumeFrom cannot be changed once the execution exists" in changed.stderr

    completed = resume(s3_env, f"{namespace}/notes-r1")
    assert completed.returncode == 1
    assert "completed; there is nothing to resume" in completed.stderr
    missing = resume(s3_env, f"{namespace}/nothing-here")
    assert (missing.returncode, missing.stderr.strip()) == (
        1,
        f"agentjobs: error: execution {namespace}/nothing-here not found",
    )


def test_r48_a_resume_that_cannot_be_made_fails_with_its_reason_and_runs_nothing(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "resume.yaml")
    assert wait_finished(kubectl, namespace, "notes", timeout=120)["status"] == "failed"
    parent = kubectl.json("get", "-n", namespace, "execution", "notes")
    changed_draft = [{**parent["spec"]["phases"][0], "prompt": "Draft differently."}]
    for name, spec, reason in (
        (
            "orphan",
            {**parent["spec"], "resumeFrom": {"name": "nothing-here"}},
            "ResumeParentNotFound",
        ),
        (
            "changed",
            {
                **parent["spec"],
                "phases": changed_draft + parent["spec"]["phases"][1:],
                "resumeFrom": {"name": "notes"},
            },
            "ResumePhasesDiffer",
        ),
    ):
        kubectl.apply(
            {
                "apiVersion": "agentjobs.io/v1alpha1",
                "kind": "Execution",
                "metadata": {"name": name},
                "spec": spec,
            },
            namespace,
        )
        status = wait_finished(kubectl, namespace, name)
        assert (status["status"], status["failureClassification"]) == ("failed", "platform")
        outcome = status["taskOutcome"]
        assert (outcome["status"], outcome["terminalReason"]) == ("blocked", reason)
        assert outcome["needsUserAction"] is True
        failed = next(c for c in status["conditions"] if c["type"] == "Failed")
        assert failed["message"].startswith("resumeFrom: "), failed
        assert phases_of(kubectl, namespace, name) == []
    assert "(prompt differ)" in failed["message"]
