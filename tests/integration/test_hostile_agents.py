"""Agents that try to trick the harvester and the fetcher, on the real local cluster (issue 15).

Each harvest case runs one busybox phase that writes `a-report.md` and one
hostile entry, and ends with the phase completed, exactly the expected
objects under its output/ (nothing from outside the output directory), the
hostile entry recorded as skipped in the manifest with exactly one warning
in the Phase's status, and no credential in any stored object of the run:
neither the S3 keys nor any value of the harvester's own environ (read from
/proc while it runs). Cases: a loop swapping a directory and a symlink to
/proc/self during the harvest; a FIFO; a socket; a device node (where mknod
is allowed); a non-UTF-8 name; a 0600 file of another user; 100,000 small
files (10,000 stored, the status lists 100 with the counts and fits the API
server); a 5 GiB sparse file over the per-file cap. The fetcher case: a
hand-made Phase whose inputs name a manifest with `..` in a path or a key
fails without writing anything outside artifacts/input/.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from devcluster.testing import Kubectl
from tests.integration.images import PYTHON_GIT
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)
from tests.integration.stored import BUCKET, stored_objects

PHASE = "hostile"
REPORT = b"the report\n"
FOOTER = """
echo "I wrote the report and left one hostile entry beside it for the harvester to meet."
echo 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "report written"}'
echo TASK_RESULT_END
"""


def execution(name: str, script: str) -> str:
    body = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": PHASE,
                    "image": PYTHON_GIT,
                    "prompt": "Write your report.",
                    "command": ["sh", "-c"],
                    # Long enough for the test to read the harvester's environ while it runs.
                    "args": [
                        'set -e\ncd "$AGENTJOBS_OUTPUT_DIR"\necho the report > a-report.md\n'
                        + script
                        + "\nsleep 2\n"
                        + FOOTER
                    ],
                }
            ]
        },
    }
    return json.dumps(body)


@contextmanager
def harvester_environs(namespace: str) -> Iterator[list[dict[bytes, bytes]]]:
    """The environ of every harvester of ``namespace``'s phases, read from /proc while it runs."""
    found: list[dict[bytes, bytes]] = []
    stop = threading.Event()
    marker = f"--root\0namespaces/{namespace}/".encode()

    def watch() -> None:
        seen: set[int] = set()
        while not stop.wait(0.1):
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit() or int(entry.name) in seen:
                    continue
                try:
                    cmdline = Path(entry.path, "cmdline").read_bytes()
                    if b"harvest\0" not in cmdline or marker not in cmdline:
                        continue
                    raw = Path(entry.path, "environ").read_bytes()
                except OSError:
                    continue
                seen.add(int(entry.name))
                found.append(dict(item.partition(b"=")[::2] for item in raw.split(b"\0") if item))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield found
    finally:
        stop.set()
        watcher.join()


def secrets_of(environs: list[dict[bytes, bytes]], s3_env: dict[str, str]) -> set[bytes]:
    assert environs, "the harvester was never seen running: its environ could not be checked"
    values = {
        s3_env["AGENTJOBS_S3_ACCESS_KEY"].encode(),
        s3_env["AGENTJOBS_S3_SECRET_KEY"].encode(),
    }
    for environ in environs:
        values |= {v for k, v in environ.items() if k.startswith(b"AGENTJOBS_") and len(v) >= 16}
    assert any(len(v) >= 32 for v in values), "no credential-sized value to look for"
    return values


def assert_no_credential(stored: dict[str, bytes], secrets: set[bytes]) -> None:
    for key, data in stored.items():
        assert b"AGENTJOBS_CREDENTIALS_TOKEN=" not in data, f"an environ was stored in {key}"
        for secret in secrets:
            assert secret not in data, f"a credential was stored in {key}"


def run_hostile(
    kubectl: Kubectl,
    namespace: str,
    s3: Minio,
    s3_env: dict[str, str],
    name: str,
    script: str,
    *,
    timeout: int = 120,
) -> tuple[dict[str, Any], dict[str, bytes], dict[str, str | None], dict[str, bytes]]:
    """Run the agent; the Phase's status, its output objects, the manifest's skipped entries
    (path: reason) and every stored object of the run, checked for credentials."""
    with harvester_environs(namespace) as environs:
        kubectl.run("apply", "-n", namespace, "-f", "-", input=execution(name, script))
        status = wait_finished(kubectl, namespace, name, timeout=timeout)
    assert status["status"] == "completed", status
    phase = phase_status(kubectl, namespace, f"{name}-0-{PHASE}")
    root = f"namespaces/{namespace}/executions/{name}/0-{PHASE}/attempt-1/"
    stored = stored_objects(s3, f"namespaces/{namespace}/executions/")
    assert_no_credential(stored, secrets_of(environs, s3_env))
    output = {k.removeprefix(root + "output/"): v for k, v in stored.items() if "/output/" in k}
    manifest = json.loads(stored[root + "manifest.json"])
    assert manifest["final"] is True
    skipped = {e["path"]: e.get("skipped") for e in manifest["entries"] if e.get("skipped")}
    return phase, output, skipped, stored


def assert_one_warning_each(phase: dict[str, Any], skipped: dict[str, str | None]) -> None:
    warnings = phase.get("artifactWarnings", [])
    assert len(warnings) == len(skipped) == phase["skippedCount"]
    for path, reason in skipped.items():
        assert [w for w in warnings if w.startswith(f"{path}: ")] == [
            f"{path}: {reason}; it is not an artifact"
        ]


def test_a_directory_swapped_with_a_symlink_to_proc_self_never_stores_the_harvesters_environ(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio, s3_env: dict[str, str]
) -> None:
    script = """
end=$(( $(date +%s) + 8 ))
while [ "$(date +%s)" -lt "$end" ]; do
  rm -rf d; mkdir d; echo mine > d/environ; echo mine > d/cmdline
  rm -rf d; ln -s /proc/self d
done
"""
    phase, output, skipped, _ = run_hostile(kubectl, namespace, s3, s3_env, "swap", script)
    assert output.pop("a-report.md") == REPORT
    # A sync that met the directory stored its own files; none met /proc through it.
    assert set(output) <= {"d/environ", "d/cmdline"}
    # Only what the agent wrote: "mine", or nothing when a sync opened the file between the
    # shell's create and its write.
    assert all(data in (b"mine\n", b"") for data in output.values()), output
    assert skipped == {"d": "a symlink; not followed"}
    assert_one_warning_each(phase, skipped)


@pytest.mark.parametrize(
    ("name", "script", "entry", "reason"),
    [
        ("fifo", "mkfifo pipe", "pipe", "a FIFO (named pipe); not read"),
        (
            "socket",
            "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock')\"",
            "sock",
            "a socket; not read",
        ),
        (
            "utf8",
            "echo x > \"$(printf 'bad\\377name.txt')\"",
            "bad\\xffname.txt",
            "its name is not UTF-8; not read",
        ),
        (
            "private",
            "echo not yours > private.txt; chmod 000 private.txt",
            "private.txt",
            "unreadable (permission denied)",
        ),
        (
            "sparse",
            "truncate -s 5G huge.bin",
            "huge.bin",
            "5368709120 bytes, over the cap of 1073741824 bytes per file; not stored",
        ),
    ],
)
def test_a_hostile_entry_is_skipped_with_one_warning_and_the_phase_completes(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    s3_env: dict[str, str],
    name: str,
    script: str,
    entry: str,
    reason: str,
) -> None:
    phase, output, skipped, _ = run_hostile(kubectl, namespace, s3, s3_env, name, script)
    assert output == {"a-report.md": REPORT}
    assert skipped == {entry: reason}
    assert_one_warning_each(phase, skipped)
    assert [a["path"] for a in phase["artifacts"]] == ["a-report.md"]


def test_a_device_node_is_skipped_where_mknod_is_allowed(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio, s3_env: dict[str, str]
) -> None:
    script = "mknod null c 1 3 || echo mknod-refused > refused.txt"
    phase, output, skipped, _ = run_hostile(kubectl, namespace, s3, s3_env, "device", script)
    if "refused.txt" in output:
        pytest.skip("mknod is not allowed in this cluster's containers")
    assert output == {"a-report.md": REPORT}
    assert skipped == {"null": "a character device; not read"}
    assert_one_warning_each(phase, skipped)


def test_100000_small_files_store_the_first_10000_and_the_status_stays_small(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess, s3: Minio, s3_env: dict[str, str]
) -> None:
    script = (
        "python3 -c \"import os; os.mkdir('many')\n"
        "for i in range(99999): open(f'many/f{i:05}', 'w').write(str(i))\""
    )
    phase, output, skipped, stored = run_hostile(
        kubectl, namespace, s3, s3_env, "many", script, timeout=600
    )
    kept = ["a-report.md"] + [f"many/f{i:05}" for i in range(9999)]
    assert sorted(output) == kept
    assert output["many/f09998"] == b"9998"
    cap = "over the cap of 10000 files per phase; not stored"
    assert skipped == {f"many/f{i:05}": cap for i in range(9999, 99999)}
    assert (phase["artifactCount"], phase["skippedCount"]) == (10000, 90000)
    assert [a["path"] for a in phase["artifacts"]] == kept[:100]
    assert len(phase["artifactWarnings"]) == 100
    assert phase["handoff"]["count"] == 10000
    handoff = stored[f"namespaces/{namespace}/executions/many/0-{PHASE}/attempt-1/artifacts.json"]
    assert phase["handoff"]["sha256"] == hashlib.sha256(handoff).hexdigest()
    whole = kubectl.run("get", "-n", namespace, "phase", f"many-0-{PHASE}", "-o", "json").stdout
    assert len(whole.encode()) < 256 * 1024  # the API server takes 1.5 MiB
    execution = kubectl.json("get", "-n", namespace, "execution", "many")["status"]
    assert execution["artifactCount"] == 10000


@pytest.mark.parametrize(
    ("path", "key_tail"),
    [
        ("../../../../../../../tmp/ESCAPE", "output/escape.md"),
        ("fine.md", "output/../../../../../../../tmp/ESCAPE"),
    ],
    ids=["dot-dot-path", "dot-dot-key"],
)
def test_input_keys_with_dot_dot_are_refused_and_nothing_is_written_outside_input(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    path: str,
    key_tail: str,
) -> None:
    escape = f"/tmp/agentjobs-escape-{uuid.uuid4().hex}"
    path, key_tail = path.replace("/tmp/ESCAPE", escape), key_tail.replace("/tmp/ESCAPE", escape)
    previous = f"namespaces/{namespace}/executions/evil/0-draft/attempt-1"
    if not s3.bucket_exists(BUCKET):
        s3.make_bucket(BUCKET)
    data = b"written where it must not be\n"
    key = f"{previous}/{key_tail}"
    if ".." not in key.split("/"):  # a key with `..` cannot even be stored: it is only named
        s3.put_object(BUCKET, key, _stream(data), len(data))
    manifest = json.dumps(
        {
            "version": 1,
            "artifacts": [
                {
                    "path": path,
                    "url": f"s3://{BUCKET}/{key}",
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                }
            ],
        }
    ).encode()
    s3.put_object(BUCKET, f"{previous}/artifacts.json", _stream(manifest), len(manifest))
    phase = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "evil-1-consume"},
        "spec": {
            "executionName": "evil",
            "index": 1,
            "name": "consume",
            "image": PYTHON_GIT,
            "keepPods": True,  # the test reads the fetcher's log after the end
            "prompt": "Read your inputs.",
            "command": ["sh", "-c", "echo the agent ran > $AGENTJOBS_OUTPUT_DIR/ran.txt"],
            "inputs": {
                "manifest": f"s3://{BUCKET}/{previous}/artifacts.json",
                "sha256": hashlib.sha256(manifest).hexdigest(),
                "count": 1,
            },
        },
    }
    kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(phase))
    wait_for(
        lambda: phase_status(kubectl, namespace, "evil-1-consume").get("finishedAt"),
        timeout=90,
        what="the hand-made phase to finish",
    )
    status = phase_status(kubectl, namespace, "evil-1-consume")
    assert status["status"] == "failed"

    def fetcher_log() -> str:
        return kubectl.run(
            "logs", "-n", namespace, "evil-1-consume-a1", "-c", "fetch-inputs", check=False
        ).stdout

    refusals = ("unsafe artifact path", "stored outside the handed-on artifacts")
    # The log may show a moment after the phase's end: R61 ends it on the exit code.
    wait_for(
        lambda: any(refusal in fetcher_log() for refusal in refusals),
        timeout=20,
        what=f"the fetcher's refusal in its log (phase: {json.dumps(status)})",
    )
    assert not os.path.lexists(escape)
    produced = [
        item.object_name
        for item in s3.list_objects(
            BUCKET, prefix=f"namespaces/{namespace}/executions/evil/1-consume/", recursive=True
        )
    ]
    assert not any(name and name.endswith("output/ran.txt") for name in produced)


def _stream(data: bytes) -> io.BytesIO:
    return io.BytesIO(data)
