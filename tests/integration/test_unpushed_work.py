"""Unpushed work kept from a failed phase, on the real local cluster (R52, issue 11).

Case: an agent clones an origin the test serves with `git daemon` on the node network, makes
two commits it does not push (the first touching .github/workflows/ci.yml) and exits 1. The
failed phase keeps ``work/service/unpushed.patch`` and ``work/service/workflow-changes.patch``
as artifacts titled "(kept from a failed phase)", stored beside output/ and recorded in the
harvester's manifest, and the repository's fsmonitor, pager, external diff and textconv (set
after its commits to a script that calls the test back over HTTP) never run in the harvester;
``git am`` of the first on a fresh clone of the origin gives the same trees, messages and
authors as the same script run here; the second
holds only the workflow file; the recovered last message names the branch
and both patches (R31); `agentjobs artifacts --download` fetches the patches too
(they are listed, not handed on). Runs on versitygw.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from minio import Minio

from devcluster.layout import HOST_ADDRESS
from devcluster.testing import Kubectl
from tests.integration.images import PYTHON_GIT
from tests.integration.operator_fixtures import (
    OperatorProcess,
    free_port,
    phase_status,
    wait_finished,
)
from tests.integration.stored import BUCKET, stored_objects

# Fixed identities and dates: the same script gives the same commits in the pod and here.
AGENT = r"""
set -e
export GIT_AUTHOR_NAME="Ada Agent" GIT_AUTHOR_EMAIL=ada@example.com
export GIT_COMMITTER_NAME="Ada Agent" GIT_COMMITTER_EMAIL=ada@example.com
export GIT_AUTHOR_DATE="2026-12-01T10:00:00Z" GIT_COMMITTER_DATE="2026-12-01T10:00:00Z"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
printf '#!/bin/sh\npython3 -c "import urllib.request; urllib.request.urlopen(\\"%s\\")"\ncat\n' \
  "$CANARY" > "$TRAP"
chmod 755 "$TRAP"
git -c safe.directory='*' clone -q "$ORIGIN" service
cd service
mkdir -p .github/workflows
printf 'on: push\njobs: {test: {runs-on: ubuntu-latest, steps: [{run: make test}]}}\n' \
  > .github/workflows/ci.yml
printf 'retries = 3\n' > settings.toml
git add -A
git commit -q -m "Run the tests in CI" -m "The workflow runs make test on every push."
printf 'def retry(n):\n    return n - 1\n' > retry.py
git add -A
git commit -q -m "Count retries down"
# Hostile from here on: whoever runs git in this repository next runs $TRAP.
git config core.fsmonitor "$TRAP"
git config core.pager "$TRAP"
git config diff.external "$TRAP"
git config diff.trap.textconv "$TRAP"
echo '* diff=trap' > .git/info/attributes
echo "I committed the CI workflow and the retry counter on main but could not push them."
echo 'TASK_RESULT: {"success": false, "failure_reason": "platform", "comments": "push refused"}'
echo TASK_RESULT_END
exit 1
"""


def git(directory: Path, *arguments: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(directory),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_COMMITTER_NAME": "Replay",
        "GIT_COMMITTER_EMAIL": "replay@example.com",
    }
    return subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(directory), *arguments],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


class Canary:
    """An HTTP endpoint on the node network that counts the requests it gets: the trap's call."""

    def __init__(self) -> None:
        self.calls = 0
        canary = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                canary.calls += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer((HOST_ADDRESS, 0), Handler)
        self.url = f"http://{HOST_ADDRESS}:{self._server.server_address[1]}/sprung"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def canary() -> Iterator[Canary]:
    served = Canary()
    yield served
    served.close()


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[str]:
    """The URL of a repository with one commit on main, served read-only by `git daemon` on
    the host's address on the node network, where the pod reaches it."""
    top = tmp_path / "served"
    seed = top / "seed"
    seed.mkdir(parents=True)
    git(seed, "init", "-q", "-b", "main")
    (seed / "README.md").write_text("service\n")
    git(seed, "add", "-A")
    git(
        seed,
        "-c",
        "user.name=Seed",
        "-c",
        "user.email=seed@example.com",
        "commit",
        "-q",
        "-m",
        "Start",
    )
    git(top, "clone", "-q", "--bare", str(seed), str(top / "origin.git"))
    port = free_port()
    daemon = subprocess.Popen(
        [
            "git", "daemon", "--reuseaddr", "--export-all", f"--base-path={top}",
            f"--listen={HOST_ADDRESS}", f"--port={port}", str(top),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"git://{HOST_ADDRESS}:{port}/origin.git"
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["git", "ls-remote", url], capture_output=True).returncode:
            assert time.monotonic() < deadline, "git daemon did not serve the origin"
            time.sleep(0.1)
        yield url
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def execution(origin: str, canary: Canary) -> str:
    return json.dumps(
        {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": "unpushed"},
            "spec": {
                "phases": [
                    {
                        "name": "fix",
                        "image": PYTHON_GIT,
                        "prompt": "Add CI and a retry counter, then push.",
                        "command": ["sh", "-c", AGENT],
                        "env": [
                            {"name": "ORIGIN", "value": origin},
                            {"name": "TRAP", "value": "/workspace/trap.sh"},
                            {"name": "CANARY", "value": canary.url},
                        ],
                    }
                ]
            },
        }
    )


def history(repo: Path) -> str:
    return git(repo, "log", "--format=%T %an <%ae> %ad%n%B", "origin/main..HEAD")


def test_a_failed_phase_keeps_its_unpushed_commits_as_patches_that_git_am_replays(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    s3: Minio,
    s3_env: dict[str, str],
    origin: str,
    canary: Canary,
    tmp_path: Path,
) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input=execution(origin, canary))
    status = wait_finished(kubectl, namespace, "unpushed", timeout=120)
    assert (status["status"], status["deliverableProduced"]) == ("failed", True)
    assert canary.calls == 0  # the harvester's git ran nothing the repository configures
    phase = phase_status(kubectl, namespace, "unpushed-0-fix")
    root = f"namespaces/{namespace}/executions/unpushed/0-fix/attempt-1"
    artifacts = {artifact["path"]: artifact for artifact in phase["artifacts"]}
    assert sorted(artifacts) == [
        "recovered-from-transcript.md",
        "work/service/unpushed.patch",
        "work/service/workflow-changes.patch",
    ]
    for name in ("unpushed.patch", "workflow-changes.patch"):
        artifact = artifacts[f"work/service/{name}"]
        assert artifact["title"] == f"work/service/{name} (kept from a failed phase)"
        assert artifact["keptAs"] == "failed_phase"
        assert artifact["url"] == f"s3://{BUCKET}/{root}/work/service/{name}"
    stored = stored_objects(s3, f"{root}/")
    unpushed = stored[f"{root}/work/service/unpushed.patch"]
    workflow = stored[f"{root}/work/service/workflow-changes.patch"]
    [record] = json.loads(stored[f"{root}/manifest.json"])["work"]
    assert (record["repo"], record["branch"], record["upstream"]) == (
        "service",
        "main",
        "origin/main",
    )
    assert (record["commits"], record["workflowCommits"]) == (2, 1)
    assert record["unpushedPatch"]["size"] == len(unpushed)

    # The same script here, from the same origin, gives the commits the pod made.
    expected = tmp_path / "expected"
    expected.mkdir()
    subprocess.run(
        ["sh", "-c", AGENT],
        cwd=expected,
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "ORIGIN": origin,
            "TRAP": str(tmp_path / "trap.sh"),
            "CANARY": canary.url,
        },
        capture_output=True,
        check=False,
    )
    made = expected / "service"
    assert record["head"] == git(made, "rev-parse", "HEAD").strip()
    replay = tmp_path / "replay"
    git(tmp_path, "clone", "-q", origin, str(replay))
    (tmp_path / "unpushed.patch").write_bytes(unpushed)
    git(replay, "am", "-q", str(tmp_path / "unpushed.patch"))
    assert history(replay) == history(made)
    assert git(replay, "rev-parse", "HEAD^{tree}") == git(made, "rev-parse", "HEAD^{tree}")
    git(made, "diff", "HEAD~1")  # the trap is armed: plain git in that repository springs it
    assert canary.calls > 0
    text = workflow.decode()
    assert text.count("\nSubject: ") == 1 and "Run the tests in CI" in text
    assert "a/.github/workflows/ci.yml" in text
    assert "settings.toml" not in text and "retry.py" not in text
    download = subprocess.run(
        [
            str(Path(sys.executable).parent / "agentjobs"),
            "artifacts",
            f"{namespace}/unpushed",
            "--download",
            str(tmp_path / "downloaded"),
        ],
        env=s3_env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert download.stdout.count("sha256 verified") == 3
    assert (
        tmp_path / "downloaded" / "0-fix" / "work" / "service" / "unpushed.patch"
    ).read_bytes() == unpushed
    recovered = stored[f"{root}/output/recovered-from-transcript.md"].decode()
    assert "## Where this phase's work stands" in recovered
    assert "on branch `main`" in recovered and "2 commit(s) not on `origin/main`" in recovered
    assert "`work/service/unpushed.patch`" in recovered
    assert "`work/service/workflow-changes.patch`" in recovered
