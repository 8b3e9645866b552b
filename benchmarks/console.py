"""How fast the console's two heavy pages are, in real headless Chromium, on the local cluster.

- The Executions page of one namespace holding ``--executions`` Executions (default 1,000)
  with finished statuses: from navigation to the page's load event.
- The conversation page of a stored Claude Code-shaped transcript of ``--transcript-mb``
  MB (default 50): from navigation to its first turn shown.

The objects are made directly (no operator runs them): Executions with their statuses, an
Execution and a Phase whose attempt record names the transcript stored in the cluster's S3
store. Needs `python -m devcluster up`; prints each time, the best of ``--runs`` loads.

    python -m benchmarks.console [--executions 1000] [--transcript-mb 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from minio import Minio
from playwright.sync_api import sync_playwright

from devcluster import cluster
from devcluster.layout import default_layout
from tests.integration.console_fixtures import console

NAMESPACE = "console-bench"


def kubectl(env: dict[str, str], *args: str, data: str | None = None) -> str:
    return subprocess.run(
        ["kubectl", *args], input=data, env={**os.environ, **env}, text=True,
        capture_output=True, check=True, timeout=600,
    ).stdout  # fmt: skip


def status(index: int) -> dict[str, Any]:
    return {
        "status": "completed" if index % 3 else "failed",
        "failureClassification": None if index % 3 else "platform",
        "deliverableProduced": bool(index % 3),
        "usage": {"costUsd": 0.01 * index, "inputTokens": 1000 + index, "outputTokens": 10},
        "phases": [{"name": "work", "status": "completed"}],
        "currentPhase": "work",
    }


def make_executions(env: dict[str, str], count: int) -> None:
    items = [
        {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {
                "name": f"run-{i:05d}",
                "namespace": NAMESPACE,
                "labels": {"team": "bench"},
            },
            "spec": {"phases": [{"name": "work", "image": "busybox", "prompt": "Work."}]},
        }
        for i in range(count)
    ]
    kubectl(
        env,
        "apply",
        "--server-side",
        "-f",
        "-",
        data=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
    )
    for i in range(count):
        kubectl(env, "patch", "execution", f"run-{i:05d}", "-n", NAMESPACE, "--subresource=status",
                "--type=merge", "-p", json.dumps({"status": status(i)}))  # fmt: skip


def transcript(megabytes: int) -> bytes:
    """Claude Code-shaped: a tool call, its output and a message, over and over."""
    lines = []
    size, turn = 0, 0
    while size < megabytes * 1024 * 1024:
        turn += 1
        for event in (
            {"type": "assistant", "message": {"id": f"m{turn}", "role": "assistant", "content": [
                {"type": "text", "text": f"Step {turn}: reading the next file."},
                {"type": "tool_use", "id": f"t{turn}", "name": "Read",
                 "input": {"path": f"src/f{turn}.py"}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "x = 1\n" * 300}]}},
        ):  # fmt: skip
            line = json.dumps(event) + "\n"
            lines.append(line)
            size += len(line)
    return "".join(lines).encode()


def store_transcript(env: dict[str, str], megabytes: int) -> None:
    data = transcript(megabytes)
    bucket = env.get("AGENTJOBS_S3_BUCKET", "agentjobs")
    endpoint = env["AGENTJOBS_S3_ENDPOINT"].split("://", 1)[1]
    s3 = Minio(
        endpoint, env["AGENTJOBS_S3_ACCESS_KEY"], env["AGENTJOBS_S3_SECRET_KEY"], secure=False
    )
    if not s3.bucket_exists(bucket):
        s3.make_bucket(bucket)
    key = f"namespaces/{NAMESPACE}/executions/big/0-work/attempt-1/transcript.log"
    s3.put_object(bucket, key, io.BytesIO(data), len(data))
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1", "kind": "Execution",
        "metadata": {"name": "big", "namespace": NAMESPACE},
        "spec": {"phases": [{"name": "work", "image": "busybox", "prompt": "Work."}]},
    }  # fmt: skip
    kubectl(env, "apply", "-f", "-", data=json.dumps(execution))
    uid = json.loads(kubectl(env, "get", "execution", "big", "-n", NAMESPACE, "-o", "json"))[
        "metadata"
    ]["uid"]
    phase = {
        "apiVersion": "agentjobs.io/v1alpha1", "kind": "Phase",
        "metadata": {
            "name": "big-0-work", "namespace": NAMESPACE,
            "labels": {"agentjobs.io/execution": "big"},
            "ownerReferences": [{"apiVersion": "agentjobs.io/v1alpha1", "kind": "Execution",
                                 "name": "big", "uid": uid, "controller": True}],
        },
        "spec": {"executionName": "big", "index": 0, "name": "work", "image": "busybox",
                 "prompt": "Work.", "transcriptFormat": "claude-code"},
    }  # fmt: skip
    kubectl(env, "apply", "-f", "-", data=json.dumps(phase))
    record = {"status": {"status": "completed", "attempts": [{
        "number": 1, "status": "completed", "podName": "big-0-work-a1",
        "finishedAt": "2026-12-05T00:00:00Z",
        "transcript": {"url": f"s3://{bucket}/{key}", "sha256": hashlib.sha256(data).hexdigest(),
                       "size": len(data)},
    }]}}  # fmt: skip
    kubectl(env, "patch", "phase", "big-0-work", "-n", NAMESPACE, "--subresource=status",
            "--type=merge", "-p", json.dumps(record))  # fmt: skip


def report(page: str, what: str, times: list[float]) -> None:
    each = ", ".join(f"{t:.3f}" for t in times)
    print(f"{page}, {what}: best {min(times):.3f} s of {len(times)} ({each})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=1000)
    parser.add_argument("--transcript-mb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = cluster.environment(default_layout())
    kubectl(env, "delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=true")
    kubectl(env, "create", "namespace", NAMESPACE)
    started = time.monotonic()
    make_executions(env, args.executions)
    store_transcript(env, args.transcript_mb)
    print(
        f"made {args.executions} Executions and a {args.transcript_mb} MB transcript "
        f"in {time.monotonic() - started:.0f} s"
    )
    chromium = shutil.which("chromium")
    assert chromium is not None, "apt-get install chromium"
    with (
        tempfile.TemporaryDirectory() as directory,
        console(env, Path(directory) / "console.log") as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        listing, first_turns = [], []
        for _ in range(args.runs):
            began = time.monotonic()
            page.goto(f"{url}/executions?namespace={NAMESPACE}", wait_until="load")
            listing.append(time.monotonic() - began)
            assert page.locator("#rows tr").count() == args.executions + 1  # and "big"
            began = time.monotonic()
            address = f"{url}/executions/{NAMESPACE}/big/phases/work/attempts/1"
            page.goto(address, wait_until="commit")
            page.locator("#conversation .entry").first.wait_for(state="visible")
            first_turns.append(time.monotonic() - began)
        browser.close()
    report("Executions page", f"{args.executions} Executions", listing)
    report("conversation page", f"{args.transcript_mb} MB transcript, first turns", first_turns)
    kubectl(env, "delete", "namespace", NAMESPACE, "--wait=false")


if __name__ == "__main__":
    main()
