"""`agentjobs run --log-format json` over a full run on the local cluster, with storage.

Every line the operator wrote parses as one JSON object; each line logged
while a phase ran carries its namespace, execution, phase and attempt; and
no credential is anywhere in the log: not the S3 keys, not a phase's token
(read from its Secret while the phase ran), not a presigned URL's signature.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    wait_finished,
)

INPUT = "/workspace/artifacts/input"
REPORT = builders.report(comments="notes handed on")


def phase(name: str, script: str) -> dict[str, Any]:
    done = builders.echo_block(REPORT)
    return {"name": name, "image": BUSYBOX, "prompt": "Work.", "command": ["sh", "-c"],
            "args": [f"{script}; {done}"]}  # fmt: skip


def tokens(kubectl: Kubectl, namespace: str) -> set[str]:
    """The values of every phase token Secret there is now."""
    found = set()
    for secret in kubectl.json("get", "secrets", "-n", namespace)["items"]:
        if "-storage-" in secret["metadata"]["name"]:
            found |= {base64.b64decode(v).decode() for v in (secret.get("data") or {}).values()}
    return found


def test_json_lines_carry_the_phase_and_no_credential(
    kubectl: Kubectl, namespace: str, crds: None, s3_env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "operator.log"
    operator = OperatorProcess(s3_env, namespace, log, ["--log-format=json"])
    operator.start()
    try:
        kubectl.apply(
            {
                "apiVersion": "agentjobs.io/v1alpha1",
                "kind": "Execution",
                "metadata": {"name": "logged"},
                "spec": {
                    "phases": [
                        phase(
                            "write", 'sleep 3; echo "# Notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"'
                        ),
                        phase("read", f'cp {INPUT}/notes.md "$AGENTJOBS_OUTPUT_DIR/seen.md"'),
                    ]
                },
            },
            namespace,
        )
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(seen) < 2:
            seen |= tokens(kubectl, namespace)
            time.sleep(0.5)
        assert wait_finished(kubectl, namespace, "logged")["status"] == "completed"
    finally:
        operator.stop()
    text = log.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= line.keys() for line in lines)

    of_phases = [line for line in lines if "phase" in line]
    assert {line["phase"] for line in of_phases} == {"write", "read"}
    for line in of_phases:
        assert (line["namespace"], line["execution"]) == (namespace, "logged"), line
        assert line["attempt"] == 1, line

    assert len(seen) >= 2  # a token (and the CA) of at least one phase was read while it ran
    secrets = {s3_env["AGENTJOBS_S3_SECRET_KEY"], s3_env["AGENTJOBS_S3_ACCESS_KEY"]}
    for credential in secrets | {t for t in seen if "BEGIN CERTIFICATE" not in t}:
        assert credential not in text
    assert "X-Amz-Signature" not in text and "X-Amz-Credential" not in text
