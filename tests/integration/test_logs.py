"""`agentjobs logs` on the local cluster: a phase's transcript outlives its pod, byte for byte.

A real `agentjobs run` with storage runs a one-phase Execution whose agent
prints bytes a text pipeline would mangle (a carriage return mid-line, a byte that is
not UTF-8, a tab); its pod is then deleted, and `agentjobs logs` prints from
storage exactly what `kubectl logs` printed while the pod was there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, phase_status, wait_finished

AGENTJOBS = str(Path(sys.executable).parent / "agentjobs")
REPORT = builders.report(comments="wrote odd bytes")


def logs(s3_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [AGENTJOBS, "logs", *args], env=s3_env, capture_output=True, timeout=60, check=False
    )


def test_a_deleted_pods_transcript_is_printed_byte_for_byte(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3_env: dict[str, str]
) -> None:
    script = (
        r"printf 'first\rline\nnot utf-8: \377\376 and a\ttab\n'; "
        'echo "# Notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"; ' + builders.echo_block(REPORT)
    )
    kubectl.apply(
        {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": "odd-bytes"},
            "spec": {
                "defaults": {"keepPods": True},  # deleted by the test, once its log is read
                "phases": [
                    {
                        "name": "write",
                        "image": BUSYBOX,
                        "prompt": "Write.",
                        "command": ["sh", "-c"],
                        "args": [script],
                    }
                ],
            },
        },
        namespace,
    )
    assert wait_finished(kubectl, namespace, "odd-bytes")["status"] == "completed"
    pod = "odd-bytes-0-write-a1"
    shown = subprocess.run(
        ["kubectl", "logs", "-n", namespace, pod, "-c", "agent"],
        env=s3_env,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert shown.startswith(b"first\rline\nnot utf-8: \xff\xfe and a\ttab\n")
    (record,) = phase_status(kubectl, namespace, "odd-bytes-0-write")["attempts"]
    assert record["transcript"]["size"] == len(shown)

    kubectl.run("delete", "pod", "-n", namespace, pod, "--wait=true", "--timeout=60s")
    assert kubectl.run("get", "pod", "-n", namespace, pod, check=False).returncode != 0

    printed = logs(s3_env, f"{namespace}/odd-bytes", "--phase", "write")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == shown

    missing = logs(s3_env, f"{namespace}/odd-bytes", "--attempt", "2")
    assert missing.returncode == 1 and b"phase write has no attempt 2 yet" in missing.stderr
    unknown = logs(s3_env, f"{namespace}/nothing-here")
    assert unknown.returncode == 1 and b"not found" in unknown.stderr
