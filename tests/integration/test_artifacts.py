"""Artifacts on the real local control plane and S3 server (R28-R35).

Cases: a phase writing nested files, a 50 MB file, build junk, an empty
file, a symlink out and a symlink loop has exactly the right objects and
status, and its transcript object equals the container log; a phase that
writes nothing gets recovered-from-transcript.md, or fails on a bare
"Done."; a failed phase keeps its files, a cancelled one keeps them as
partial without counting as a deliverable; phase 2 finds phase 1's files
under artifacts/input, and `artifactRetention: Delete` removes the objects
with the execution; the S3 server stopped mid-phase and restarted loses
nothing; `agentjobs artifacts` downloads what the status lists. Each runs against
versitygw and against MinIO (ids `versitygw`, `minio`).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from devcluster import testing
from devcluster.testing import Kubectl
from tests.cluster_fixtures import every_s3_store
from tests.integration.operator_fixtures import (
    MANIFESTS,
    OperatorProcess,
    apply_manifest,
    phase_status,
    wait_finished,
    wait_for,
)
from tests.integration.stored import BUCKET, stored_objects

pytestmark = every_s3_store


def objects(s3: Minio, prefix: str) -> dict[str, bytes]:
    """Each object under ``prefix`` by its key below it."""
    return {key.removeprefix(prefix): data for key, data in stored_objects(s3, prefix).items()}


def by_path(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {artifact["path"]: artifact for artifact in status.get("artifacts", [])}


def test_r28_r29_each_kind_of_entry_is_stored_exactly_as_the_rule_says(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    apply_manifest(kubectl, namespace, "artifacts-files.yaml")
    status = wait_finished(kubectl, namespace, "files", timeout=120)
    assert status["status"] == "completed"
    phase = phase_status(kubectl, namespace, "files-0-write")
    root = f"namespaces/{namespace}/executions/files/0-write/attempt-1/"
    stored = objects(s3, root)
    assert sorted(stored) == [
        "artifacts.json",
        "manifest.json",
        "output/a/b/c.txt",
        "output/big.bin",
        "output/empty.md",
        "output/top.txt",
        "transcript.log",
    ]
    log = kubectl.run("logs", "-n", namespace, "files-0-write-a1", "-c", "agent").stdout
    assert stored["transcript.log"].decode() == log
    big_sha = re.search(r"big.bin sha256 ([0-9a-f]{64})", log)
    assert big_sha is not None
    artifacts = by_path(phase)
    assert sorted(artifacts) == ["a/b/c.txt", "big.bin", "empty.md", "top.txt"]
    assert artifacts["big.bin"]["size"] == 52428800
    assert artifacts["big.bin"]["sha256"] == big_sha.group(1)
    assert hashlib.sha256(stored["output/big.bin"]).hexdigest() == big_sha.group(1)
    assert artifacts["big.bin"]["url"] == f"s3://{BUCKET}/{root}output/big.bin"
    assert artifacts["empty.md"]["recovered"] is True
    assert artifacts["empty.md"]["title"] == "empty.md [recovered from transcript]"
    assert b"fifty megabyte binary blob" in stored["output/empty.md"]
    assert phase["deliverableRecovered"] is True
    manifest = json.loads(stored["manifest.json"])
    skipped = {e["path"]: e["skipped"] for e in manifest["entries"] if e.get("skipped")}
    assert skipped == {
        "__pycache__/mod.cpython-311.pyc": "inside a build-junk directory",
        "loop": "a symlink; not followed",
        "passwd": "a symlink; not followed",
    }
    assert manifest["final"] is True
    assert phase["report"]["warnings"] == []  # the report itself was clean
    # R28: one warning per skipped symlink (none for build junk), in the Phase's status too.
    assert sorted(phase["artifactWarnings"]) == [
        "loop: a symlink; not followed; it is not an artifact",
        "passwd: a symlink; not followed; it is not an artifact",
    ]
    assert (phase["artifactCount"], phase["skippedCount"]) == (4, 3)
    handed = json.loads(stored["artifacts.json"])
    assert sorted(a["path"] for a in handed["artifacts"]) == sorted(artifacts)
    assert phase["handoff"]["sha256"] == hashlib.sha256(stored["artifacts.json"]).hexdigest()


def _recovery(kubectl: Kubectl, namespace: str, last_message: str) -> dict[str, Any]:
    manifest = (
        (MANIFESTS / "artifacts-recovery.yaml").read_text().replace("LAST_MESSAGE", last_message)
    )
    kubectl.run("apply", "-n", namespace, "-f", "-", input=manifest)
    return wait_finished(kubectl, namespace, "recovery")


def test_r30_a_phase_that_writes_nothing_gets_its_last_message_recovered(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio
) -> None:
    message = "The outage came from an expired certificate on the internal proxy tier."
    status = _recovery(kubectl, namespace, message)
    assert (status["status"], status["deliverableProduced"]) == ("completed", True)
    phase = phase_status(kubectl, namespace, "recovery-0-summarize")
    [artifact] = phase["artifacts"]
    assert artifact["path"] == "recovered-from-transcript.md"
    assert artifact["title"].endswith("[recovered from transcript]")
    assert phase["deliverableRecovered"] is True
    stored = objects(
        s3, f"namespaces/{namespace}/executions/recovery/0-summarize/attempt-1/output/"
    )
    assert message in stored["recovered-from-transcript.md"].decode()
    assert stored["recovered-from-transcript.md"].startswith(b"> **Recovered from the transcript")


def test_r33_a_phase_that_writes_nothing_and_ends_on_done_fails(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    status = _recovery(kubectl, namespace, "Done.")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    phase = phase_status(kubectl, namespace, "recovery-0-summarize")
    assert "'summarize' produced nothing usable" in phase["error"]
    assert phase["error"].endswith("it declared outputs: summary")
    assert phase.get("artifacts", []) == []
    assert status["deliverableProduced"] is False


def test_r34_a_failed_phase_keeps_its_files_and_they_count_as_a_deliverable(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "artifacts-failed.yaml")
    status = wait_finished(kubectl, namespace, "failed-keeps")
    assert (status["status"], status["deliverableProduced"]) == ("failed", True)
    [artifact] = phase_status(kubectl, namespace, "failed-keeps-0-attempt")["artifacts"]
    assert artifact["title"] == "draft.sql (kept from a failed phase)"
    assert artifact["keptAs"] == "failed_phase"


def test_r34_a_cancelled_phase_keeps_partial_work_that_is_not_a_deliverable(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    apply_manifest(kubectl, namespace, "artifacts-cancel.yaml")
    wait_for(
        lambda: (
            "wrote chapter one"
            in kubectl.run("logs", "-n", namespace, "cancel-keeps-0-slow-a1", "-c", "agent").stdout
        ),
        what="the agent to write its file",
    )
    kubectl.run(
        "patch",
        "-n",
        namespace,
        "execution",
        "cancel-keeps",
        "--type=merge",
        "-p",
        '{"spec": {"cancel": true}}',
    )
    status = wait_finished(kubectl, namespace, "cancel-keeps")
    assert (status["status"], status["deliverableProduced"]) == ("cancelled", False)
    [artifact] = phase_status(kubectl, namespace, "cancel-keeps-0-slow")["artifacts"]
    assert (artifact["path"], artifact["title"]) == ("chapter-1.md", "chapter-1.md (partial)")


def test_r35_phase_two_receives_phase_one_files_and_deletion_removes_the_objects(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    s3_env: dict[str, str],
    tmp_path: Path,
) -> None:
    apply_manifest(kubectl, namespace, "artifacts-handoff.yaml")
    status = wait_finished(kubectl, namespace, "handoff")
    assert status["status"] == "completed"
    received = objects(
        s3, f"namespaces/{namespace}/executions/handoff/1-consume/attempt-1/output/"
    )["received.txt"]
    assert received.decode() == "./beta.txt\n./data/alpha.txt\nalpha\nbeta\n"
    meta = kubectl.json("get", "-n", namespace, "execution", "handoff")["metadata"]
    assert "agentjobs.io/artifacts" in meta["finalizers"]

    download = subprocess.run(
        [
            str(Path(sys.executable).parent / "agentjobs"),
            "artifacts",
            f"{namespace}/handoff",
            "--download",
            str(tmp_path),
        ],
        env={**s3_env, "PATH": s3_env["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "sha256 verified" in download.stdout
    assert (tmp_path / "0-produce" / "data" / "alpha.txt").read_text() == "alpha\n"

    assert objects(s3, f"namespaces/{namespace}/executions/handoff/")
    kubectl.run("delete", "-n", namespace, "execution", "handoff", "--timeout=60s")
    assert objects(s3, f"namespaces/{namespace}/executions/handoff/") == {}


# Alone on the cluster (make test's second lane): it stops the S3 store other workers' tests
# use meanwhile.
@pytest.mark.exclusive
def test_a_storage_outage_delays_the_phase_and_loses_nothing(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    s3_store: str,
) -> None:
    apply_manifest(kubectl, namespace, "artifacts-outage.yaml")
    root = f"namespaces/{namespace}/executions/outage/0-write/attempt-1/"
    wait_for(lambda: "output/before.txt" in objects(s3, root), what="the first periodic sync")
    testing.stop_s3(s3_store)
    try:
        go_on = ["exec", "-n", namespace, "outage-0-write-a1", "-c", "agent", "--"]
        kubectl.run(*go_on, "touch", "/workspace/go-on")
        wait_for(
            lambda: (
                "storage" in _running_message(kubectl, namespace)
                or "harvester" in _running_message(kubectl, namespace)
            ),
            what="the outage to show in the phase's status",
        )
        assert phase_status(kubectl, namespace, "outage-0-write")["status"] == "running"
    finally:
        testing.start_s3(s3_store)
    status = wait_finished(kubectl, namespace, "outage", timeout=120)
    assert status["status"] == "completed"
    log = kubectl.run("logs", "-n", namespace, "outage-0-write-a1", "-c", "agent").stdout
    after_sha = re.search(r"after.bin sha256 ([0-9a-f]{64})", log)
    assert after_sha is not None
    stored = objects(s3, root)
    assert hashlib.sha256(stored["output/after.bin"]).hexdigest() == after_sha.group(1)
    assert stored["output/before.txt"] == b"before\n"
    artifacts = by_path(phase_status(kubectl, namespace, "outage-0-write"))
    assert sorted(artifacts) == ["after.bin", "before.txt"]


def _running_message(kubectl: Kubectl, namespace: str) -> str:
    conditions = phase_status(kubectl, namespace, "outage-0-write").get("conditions", [])
    return next((c["message"] for c in conditions if c["type"] == "Running"), "")
