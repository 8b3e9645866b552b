"""The tests' git server (devcluster/git_server.py) refuses what a forge refuses, as git sees it.

Cases, each through the real git client over HTTP: a clone with a known token works, one with
an unknown token or none fails authentication; a push lands; a push of a workflow change is
refused in GitHub's words without the grant (nothing lands) and accepted with it; a push to
a protected branch is refused with GitHub's GH006 message.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.contract.repositories.git_errors import GitFault, classify
from devcluster.git_server import GitServer, Token

PLAIN = Token("plain-token")
GRANTED = Token("workflow-token", workflow=True)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(tmp_path, tokens=[PLAIN, GRANTED], protected=["release"]) as served:
        yield served


def git(
    *arguments: str, cwd: Path | None = None, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    auth = []
    if token is not None:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        auth = ["-c", f"http.extraHeader=Authorization: Basic {basic}"]
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *auth, *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"},
    )


def clone(server: GitServer, tmp_path: Path, token: str) -> Path:
    url = server.create("service", {"README.md": "hello\n", "src/app.py": "print(1)\n"})
    work = tmp_path / "work"
    cloned = git("clone", "-q", url, str(work), token=token)
    assert cloned.returncode == 0, cloned.stderr
    return work


def commit(work: Path, path: str, text: str, message: str) -> None:
    target = work / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    assert git("add", "-A", cwd=work).returncode == 0
    assert git("commit", "-q", "-m", message, cwd=work).returncode == 0


def test_a_known_token_clones_and_pushes(server: GitServer, tmp_path: Path) -> None:
    work = clone(server, tmp_path, PLAIN.value)
    assert (work / "src" / "app.py").read_text() == "print(1)\n"
    commit(work, "src/app.py", "print(2)\n", "Print two")
    pushed = git(
        "push", "-q", "origin", "HEAD:refs/heads/agentjobs/run", cwd=work, token=PLAIN.value
    )
    assert pushed.returncode == 0, pushed.stderr
    assert server.commits("service", "agentjobs/run") == [
        "Print two",
        "The repository's first commit",
    ]


@pytest.mark.parametrize("token", ["wrong-token", None])
def test_an_unknown_token_or_none_fails_authentication(
    server: GitServer, tmp_path: Path, token: str | None
) -> None:
    url = server.create("service", {"README.md": "hello\n"})
    cloned = git("clone", "-q", url, str(tmp_path / "work"), token=token)
    assert cloned.returncode != 0
    assert "Authentication failed" in cloned.stderr or "could not read Username" in cloned.stderr
    assert not (tmp_path / "work" / "README.md").exists()


def test_a_workflow_change_needs_the_grant(server: GitServer, tmp_path: Path) -> None:
    work = clone(server, tmp_path, PLAIN.value)
    commit(work, ".github/workflows/ci.yml", "on: push\n", "Run CI")
    refused = git("push", "origin", "HEAD:refs/heads/ci", cwd=work, token=PLAIN.value)
    assert refused.returncode != 0
    assert (
        "refusing to allow a Personal Access Token to create or update workflow "
        "`.github/workflows/ci.yml` without `workflow` scope"
    ) in refused.stderr
    assert (
        git("ls-remote", "--heads", server.url("service"), token=PLAIN.value).stdout.count(
            "refs/heads/ci"
        )
        == 0
    )
    accepted = git("push", "-q", "origin", "HEAD:refs/heads/ci", cwd=work, token=GRANTED.value)
    assert accepted.returncode == 0, accepted.stderr
    assert ".github/workflows/ci.yml" in server.changed_paths("service", "ci")


def test_a_protected_branch_refuses_any_push(server: GitServer, tmp_path: Path) -> None:
    work = clone(server, tmp_path, GRANTED.value)
    commit(work, "notes.md", "notes\n", "Add notes")
    refused = git("push", "origin", "HEAD:refs/heads/release", cwd=work, token=GRANTED.value)
    assert refused.returncode != 0
    assert "GH006: Protected branch update failed for refs/heads/release." in refused.stderr
    assert server.requests[-1][0] == "POST"


def test_r62_what_real_git_prints_against_it_is_read_as_the_right_fault(
    server: GitServer, tmp_path: Path
) -> None:
    work = clone(server, tmp_path, PLAIN.value)
    commit(work, ".github/workflows/ci.yml", "on: push\n", "Run CI")
    printed = {
        GitFault.AUTH: git("clone", server.url("service"), str(tmp_path / "a"), token="wrong"),
        GitFault.NOT_FOUND: git(
            "clone", server.url("missing"), str(tmp_path / "b"), token=PLAIN.value
        ),
        GitFault.WORKFLOW: git("push", "origin", "HEAD:refs/heads/ci", cwd=work, token=PLAIN.value),
        GitFault.PERMISSION: git(
            "push", "origin", "HEAD:refs/heads/release", cwd=work, token=GRANTED.value
        ),
        # Nothing listens on the discard port: the connection is refused.
        GitFault.NETWORK: git("clone", "http://127.0.0.1:9/service.git", str(tmp_path / "c")),
    }
    for fault, result in printed.items():
        assert result.returncode != 0
        assert classify(result.stderr.encode()).fault is fault, result.stderr
    refused = classify(printed[GitFault.PERMISSION].stderr.encode())
    assert refused.message == "error: GH006: Protected branch update failed for refs/heads/release."
