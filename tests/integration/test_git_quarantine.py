"""A phase's commits pushed again without their workflow changes (adapters/git_quarantine.py),
against the real git server whose hook refuses workflow changes without the grant.

Cases: commits that change workflows and code are rewritten with the same messages, authors,
committers and dates, their code changes whole and `.github/workflows/` as the base had it; a
commit that changed only workflows is left out; the rewritten branch is accepted by the
server that refused the original; commits without workflow changes come back as they were;
a merge is not rewritten.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters.git_quarantine import CannotQuarantine, without_workflow_changes
from devcluster.git_server import GitServer, Token

PLAIN = Token("no-workflow-grant")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(tmp_path / "server", tokens=[PLAIN]) as served:
        yield served


COMMITTER = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git(work: Path, *arguments: str, env: dict[str, str] | None = None) -> str:
    basic = base64.b64encode(f"x:{PLAIN.value}".encode()).decode()
    done = subprocess.run(
        ["git", "-c", f"http.extraHeader=Authorization: Basic {basic}", "-C", str(work),
         *arguments],
        capture_output=True, text=True, check=False,
        # A merge commits as someone: a fresh machine has no identity configured.
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", **COMMITTER, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def commit(work: Path, files: dict[str, str], message: str, who: str) -> str:
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    git(work, "add", "-A")
    identity = {
        "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@example.test",
        "GIT_AUTHOR_DATE": "1700000000 +0100", "GIT_COMMITTER_NAME": "agent",
        "GIT_COMMITTER_EMAIL": "agent@example.test", "GIT_COMMITTER_DATE": "1700000100 +0100",
    }  # fmt: skip
    git(work, "commit", "-q", "-m", message, env=identity)
    return git(work, "rev-parse", "HEAD")


def clone(server: GitServer, tmp_path: Path) -> tuple[Path, str]:
    url = server.create(
        "service", {"src/app.py": "print(1)\n", ".github/workflows/old.yml": "on: push\n"}
    )
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(server.root / "service.git"), str(work)], check=True)
    git(work, "remote", "set-url", "origin", url)
    return work, git(work, "rev-parse", "HEAD")


def env_of(work: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "GIT_DIR": str(work / ".git"), "HOME": str(work)}


def test_workflow_changes_are_left_out_and_the_rest_pushed(
    server: GitServer, tmp_path: Path
) -> None:
    work, base = clone(server, tmp_path)
    commit(work, {"src/app.py": "print(2)\n", ".github/workflows/ci.yml": "on: pr\n"},
           "Print two and run CI", "ada")  # fmt: skip
    commit(work, {".github/workflows/old.yml": "on: [push, pr]\n"}, "Widen the old workflow", "bob")
    commit(work, {"src/lib.py": "X = 1\n"}, "Add a library\n\nWith a body.", "cy")
    head = git(work, "rev-parse", "HEAD")

    new = without_workflow_changes(env_of(work), base, head)

    log = git(work, "log", "--format=%an|%ae|%ad|%cn|%cd|%B", "--date=raw", f"{base}..{new}")
    assert log.split("\n") == [
        "cy|cy@example.test|1700000000 +0100|agent|1700000100 +0100|Add a library",
        "",
        "With a body.",
        "",
        "ada|ada@example.test|1700000000 +0100|agent|1700000100 +0100|Print two and run CI",
    ]
    assert git(work, "diff", "--name-only", base, new).split() == ["src/app.py", "src/lib.py"]
    assert git(work, "rev-parse", f"{new}:.github/workflows") == git(
        work, "rev-parse", f"{base}:.github/workflows"
    )
    assert git(work, "status", "--porcelain") == ""  # nothing of the work tree was touched
    assert git(work, "rev-parse", "HEAD") == head

    basic = base64.b64encode(f"x:{PLAIN.value}".encode()).decode()
    refused = subprocess.run(
        ["git", "-c", f"http.extraHeader=Authorization: Basic {basic}", "-C", str(work),
         "push", "origin", "HEAD:refs/heads/work"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert "refusing to allow a Personal Access Token" in refused.stderr, refused.stderr
    git(work, "push", "-q", "origin", f"{new}:refs/heads/work")
    assert server.commits("service", "work")[:2] == ["Add a library", "Print two and run CI"]


def test_commits_without_workflow_changes_come_back_as_they_were(
    server: GitServer, tmp_path: Path
) -> None:
    work, base = clone(server, tmp_path)
    commit(work, {"src/app.py": "print(3)\n"}, "Print three", "ada")
    head = git(work, "rev-parse", "HEAD")
    assert without_workflow_changes(env_of(work), base, head) == head


def test_a_merge_is_not_rewritten(server: GitServer, tmp_path: Path) -> None:
    work, base = clone(server, tmp_path)
    git(work, "checkout", "-q", "-b", "side")
    commit(work, {"src/side.py": "S = 1\n"}, "Side", "ada")
    git(work, "checkout", "-q", "-")
    commit(work, {".github/workflows/ci.yml": "on: pr\n"}, "CI", "bob")
    git(work, "merge", "-q", "--no-edit", "side")
    with pytest.raises(CannotQuarantine, match="is a merge"):
        without_workflow_changes(env_of(work), base, git(work, "rev-parse", "HEAD"))
