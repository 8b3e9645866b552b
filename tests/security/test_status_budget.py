"""Statuses and transcripts a tenant's agent or grader cannot blow up (R57, R58), on the local
cluster, the Execution applied by the tenant:

- an agent that leaves 50,000 empty files with long names: the phase fails (nothing usable,
  R33) with an error that names three of them and counts the rest, its status under the
  256 KiB budget;
- 10,050 empty files sorted before the one real file: the real file is stored and kept
  under the 10,000-file cap (the harvester's, so this passes once the pods run this
  branch's harvester);
- a grader answering 1 MB of feedback (10,000 unmet criteria): the phase fails
  `outcome_not_met` with 20 blockers and the rest counted, the evaluation listing 50
  criteria and counting the rest, both statuses under the budget;
- an agent writing eight times `--max-transcript-bytes` (1 MiB here) before its TASK_RESULT:
  the phase completes on that report, and the stored transcript is the log's first MiB and
  a note, marked truncated in the run record and the attempt's record;
- a phase whose spec (1.44 MB of arguments) leaves its 100 long-named artifacts no room
  in etcd: the refused status is written once squeezed as far as it goes, and the phase
  completes with its artifacts counted, not listed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import PYTHON_GIT
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
)
from tests.integration.stored import stored_objects
from tests.security.conftest import Tenant

pytestmark = pytest.mark.integration

BUDGET = 256 * 1024
TRANSCRIPT_CAP = 1024 * 1024
REPORT = f"\n{builders.echo_block(builders.report(comments='done'))}\n"
# 50,000 empty files, each name over 100 bytes: listed whole, 10,000 of them are a megabyte.
MANY_EMPTY = (
    "python3 -c \"import os; d = os.environ['AGENTJOBS_OUTPUT_DIR'] + '/many'; os.mkdir(d)\n"
    "for i in range(50000): open(f'{d}/{i:05}-' + 'n' * 100, 'w').close()\"\n" + REPORT
)
# 10,050 empty files whose paths sort before the one file with content.
EMPTY_FIRST = (
    "python3 -c \"import os; d = os.environ['AGENTJOBS_OUTPUT_DIR']; os.mkdir(d + '/a')\n"
    "for i in range(10050): open(f'{d}/a/{i:05}', 'w').close()\n"
    "open(d + '/z-report.md', 'w').write('the report')\"\n" + REPORT
)
# One GRADE_RESULT of 10,000 unmet criteria, over 1,000,000 bytes and under the 1 MiB block cap.
VERBOSE_GRADER = (
    'python3 -c "import json\n'
    "criteria = [{'name': f'c{i:05}', 'met': False, 'feedback': 'f' * 48} for i in range(10000)]\n"
    "body = json.dumps({'result': 'needs_revision', 'explanation': 'e' * 20000, "
    "'criteria': criteria})\n"
    "assert 1000000 < len(body) < 1048576\n"
    "print('GRADE_RESULT: ' + body)\n"
    "print('GRADE_RESULT_END')\"\n"
)
# Eight MiB of lines, then the report: only the lines are past the cap. Under the kubelet's
# 10 MiB log rotation, which would leave the report in a file the API no longer joins to the
# one read (a rotated-away log is a broken stream, R14).
LOUD = (
    'echo draft > "$AGENTJOBS_OUTPUT_DIR/report.md"\n'
    'python3 -c "import sys\n'
    "line = b'x' * 1023 + b'\\n'\n"
    'for _ in range(8 * 1024): sys.stdout.buffer.write(line)"\n' + REPORT
)


# 100 files whose paths are near 700 bytes: listed, they are about 235 kB of status.
LONG_PATHS = (
    'python3 -c "import os\n'
    "d = os.environ['AGENTJOBS_OUTPUT_DIR'] + '/' + '/'.join(c * 200 for c in 'abc')\n"
    "os.makedirs(d)\n"
    "for i in range(100): open(f'{d}/{i:02}-' + 'd' * 90, 'w').write('x')\"\n" + REPORT
)
# Arguments the agent ignores ($0, $1, ...), each under Linux's 128 KiB per argument.
FILLER = ["f" * 120_000] * 12


def execution(name: str, script: str, **phase: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": "p",
                    "image": PYTHON_GIT,
                    "command": ["sh", "-c"],
                    "args": [script],
                    "prompt": "Do the work.",
                    **phase,
                }
            ]
        },
    }


def status_size(kubectl: Kubectl, namespace: str, kind: str, name: str) -> int:
    body = kubectl.json("get", "-n", namespace, kind, name)
    return len(json.dumps(body["status"]).encode())


@pytest.fixture
def small_transcripts(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator for the test's namespace, storing at most 1 MiB of each transcript."""
    flags = [f"--max-transcript-bytes={TRANSCRIPT_CAP}"]
    process = OperatorProcess(s3_env, namespace, tmp_path / "operator.log", flags)
    process.start()
    yield process
    process.stop()
    print(process.log()[-20000:])


def test_fifty_thousand_empty_files_end_the_phase_with_a_short_error(
    kubectl: Kubectl, tenant: Tenant, operator: OperatorProcess
) -> None:
    namespace = tenant.namespace
    tenant.kubectl.apply(execution("many", MANY_EMPTY), namespace)
    status = wait_finished(kubectl, namespace, "many", timeout=600)
    phase = phase_status(kubectl, namespace, "many-0-p")
    assert (status["status"], phase["status"]) == ("failed", "failed")
    error = phase["error"]
    assert "it wrote 10,000 empty files (many/00000-" in error and "and 9,997 more)" in error
    assert len(error) < 1024
    assert phase["skippedCount"] == 40_000 and len(phase["artifactWarnings"]) <= 100
    assert status_size(kubectl, namespace, "phase", "many-0-p") < BUDGET
    assert status_size(kubectl, namespace, "execution", "many") < BUDGET


def test_empty_files_never_take_the_file_cap_from_the_deliverable(
    kubectl: Kubectl, tenant: Tenant, operator: OperatorProcess
) -> None:
    namespace = tenant.namespace
    tenant.kubectl.apply(execution("empties", EMPTY_FIRST), namespace)
    status = wait_finished(kubectl, namespace, "empties", timeout=300)
    phase = phase_status(kubectl, namespace, "empties-0-p")
    # Empty files and a last message with nothing to recover: R33 fails the phase, and R34
    # keeps its one non-empty file.
    assert (status["status"], phase["status"]) == ("failed", "failed")
    assert [a["path"] for a in phase["artifacts"]] == ["z-report.md"]
    assert (
        "it wrote 9,999 empty files (a/00000, a/00001, a/00002 and 9,996 more)" in (phase["error"])
    )


def test_a_grader_answering_a_megabyte_of_feedback_leaves_counted_lists(
    kubectl: Kubectl, tenant: Tenant, operator: OperatorProcess
) -> None:
    namespace = tenant.namespace
    agent = 'echo report > "$AGENTJOBS_OUTPUT_DIR/report.md"\n' + REPORT
    outcome = {
        "rubric": "## Every criterion\n",
        "maxIterations": 1,
        "grader": {"command": ["sh", "-c"], "args": [VERBOSE_GRADER]},
    }
    tenant.kubectl.apply(execution("verbose", agent, outcome=outcome), namespace)
    status = wait_finished(kubectl, namespace, "verbose", timeout=300)
    phase = phase_status(kubectl, namespace, "verbose-0-p")
    assert (status["status"], status["failureClassification"]) == ("failed", "outcome_not_met")
    assert phase["outcome"]["result"] == "max_iterations_reached"
    (evaluation,) = phase["outcome"]["evaluations"]
    assert (len(evaluation["criteria"]), evaluation["criteriaOmitted"]) == (50, 9_950)
    for outcome_of in (phase["taskOutcome"], status["taskOutcome"]):
        assert (len(outcome_of["blockers"]), outcome_of["blockersOmitted"]) == (20, 9_980)
    assert status_size(kubectl, namespace, "phase", "verbose-0-p") < BUDGET
    assert status_size(kubectl, namespace, "execution", "verbose") < BUDGET


def test_a_transcript_eight_times_the_cap_is_stored_truncated_and_its_late_report_counts(
    kubectl: Kubectl, tenant: Tenant, small_transcripts: OperatorProcess, s3: Minio
) -> None:
    namespace = tenant.namespace
    tenant.kubectl.apply(execution("loud", LOUD), namespace)
    status = wait_finished(kubectl, namespace, "loud", timeout=300)
    phase = phase_status(kubectl, namespace, "loud-0-p")
    assert (status["status"], phase["status"]) == ("completed", "completed")
    assert phase["report"]["state"] == "success"  # its block came after the cap
    run, (attempt,) = phase["run"], phase["attempts"]
    assert run["transcriptTruncated"] is True and attempt["transcript"]["truncated"] is True
    root = f"namespaces/{namespace}/executions/loud/0-p/attempt-1/"
    stored = stored_objects(s3, root)[root + "transcript.log"]
    assert stored.startswith(b"x" * 1023 + b"\n")
    head, note = stored[:TRANSCRIPT_CAP], stored[TRANSCRIPT_CAP:]
    assert b"TASK_RESULT" not in head and b"transcript truncated" in note
    assert len(stored) == run["transcriptBytes"] == attempt["transcript"]["size"]
    assert hashlib.sha256(stored).hexdigest() == attempt["transcript"]["sha256"]
    assert status_size(kubectl, namespace, "phase", "loud-0-p") < BUDGET


def test_a_status_etcd_refuses_beside_a_large_spec_is_written_once_squeezed(
    kubectl: Kubectl, tenant: Tenant, operator: OperatorProcess
) -> None:
    namespace = tenant.namespace
    body = execution("roomless", LONG_PATHS)
    body["spec"]["phases"][0]["args"] += FILLER
    # Created, not applied: kubectl apply would copy it all into an annotation.
    tenant.kubectl.run("create", "-n", namespace, "-f", "-", input=json.dumps(body))
    status = wait_finished(kubectl, namespace, "roomless", timeout=300)
    phase = phase_status(kubectl, namespace, "roomless-0-p")
    assert (status["status"], phase["status"]) == ("completed", "completed")
    assert phase["artifactCount"] == 100 and len(phase.get("artifacts", [])) < 100
    assert "/status: refused for its size (" in operator.log()
