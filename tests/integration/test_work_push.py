"""A phase's work branch pushed at the end of an attempt (sidecars/work_push.py), against the
real git server.

Cases: work lands on its branch; a protected branch refuses it in GitHub's words
(permission); a workflow change is pushed without it when the token lacks the grant (and the
server's branch has no workflow change), as it is when the token has the grant; a branch that
moved on at the server is not overwritten (moved); an unreachable server is tried four
times with a backoff between, then is a network fault.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters.git_checkout import GitCredentials
from agentjobs.contract.repositories.git_errors import GitFault
from agentjobs.sidecars.work_push import push_work
from devcluster.git_server import GitServer, Token

PLAIN = Token("plain-0123456789")
GRANTED = Token("granted-0123456789", workflow=True)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(tmp_path / "server", tokens=[PLAIN, GRANTED], protected=["main"]) as served:
        served.create("service", {"src/app.py": "print(1)\n"})
        yield served


def git(work: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(work), "-c", "user.name=agent", "-c", "user.email=a@example.test",
         *arguments],
        capture_output=True, text=True, check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )  # fmt: skip
    return done.stdout.strip()


def work(server: GitServer, tmp_path: Path, files: dict[str, str]) -> tuple[Path, str, str]:
    """A clone with one commit of ``files`` on it: (clone, base, head)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(server.root / "service.git"), str(clone)], check=True)
    base = git(clone, "rev-parse", "HEAD")
    for path, text in files.items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "The agent's work")
    return clone, base, git(clone, "rev-parse", "HEAD")


def pushed(
    server: GitServer, tmp_path: Path, clone: Path, base: str, head: str, *,
    branch: str = "agentjobs/fix-1", token: Token = PLAIN, url: str | None = None,
    sleeps: list[float] | None = None,
):  # type: ignore[no-untyped-def]  # fmt: skip
    return push_work(
        {"GIT_DIR": str(clone / ".git")}, url=url or server.url("service"),
        credentials=GitCredentials(token.value), base=base, head=head, branch=branch,
        home=tmp_path, sleep=(sleeps.append if sleeps is not None else lambda _: None),
    )  # fmt: skip


def test_work_lands_on_its_branch(server: GitServer, tmp_path: Path) -> None:
    clone, base, head = work(server, tmp_path, {"src/app.py": "print(2)\n"})
    result = pushed(server, tmp_path, clone, base, head)
    assert result.failure is None and not result.workflow_changes_quarantined
    assert git(server.root / "service.git", "rev-parse", "agentjobs/fix-1") == head


def test_a_protected_branch_refuses_it_in_the_servers_words(
    server: GitServer, tmp_path: Path
) -> None:
    clone, base, head = work(server, tmp_path, {"src/app.py": "print(2)\n"})
    result = pushed(server, tmp_path, clone, base, head, branch="main")
    assert result.failure is not None and result.failure.fault is GitFault.PERMISSION
    assert (
        result.failure.message
        == "error: GH006: Protected branch update failed for refs/heads/main."
    )
    assert git(server.root / "service.git", "rev-parse", "main") == base


def test_a_workflow_change_is_left_out_without_the_grant_and_kept_with_it(
    server: GitServer, tmp_path: Path
) -> None:
    files = {"src/app.py": "print(2)\n", ".github/workflows/ci.yml": "on: push\n"}
    clone, base, head = work(server, tmp_path, files)
    quarantined = pushed(server, tmp_path, clone, base, head)
    assert quarantined.failure is None and quarantined.workflow_changes_quarantined
    assert server.changed_paths("service", "agentjobs/fix-1") == {"src/app.py"}
    assert git(server.root / "service.git", "log", "-1", "--format=%s", "agentjobs/fix-1") == (
        "The agent's work"
    )
    kept = pushed(server, tmp_path, clone, base, head, branch="with-grant", token=GRANTED)
    assert kept.failure is None and not kept.workflow_changes_quarantined
    assert git(server.root / "service.git", "rev-parse", "with-grant") == head


def test_a_branch_that_moved_on_is_not_overwritten(server: GitServer, tmp_path: Path) -> None:
    clone, base, head = work(server, tmp_path, {"src/app.py": "print(2)\n"})
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(server.root / "service.git"), str(other)], check=True)
    (other / "README.md").write_text("theirs\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "Theirs")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/agentjobs/fix-1")
    theirs = git(other, "rev-parse", "HEAD")
    result = pushed(server, tmp_path, clone, base, head)
    assert result.failure is not None and result.failure.fault is GitFault.MOVED
    assert git(server.root / "service.git", "rev-parse", "agentjobs/fix-1") == theirs


def test_an_unreachable_server_is_tried_four_times(server: GitServer, tmp_path: Path) -> None:
    clone, base, head = work(server, tmp_path, {"src/app.py": "print(2)\n"})
    sleeps: list[float] = []
    result = pushed(
        server, tmp_path, clone, base, head, url="http://127.0.0.1:9/service.git", sleeps=sleeps
    )
    assert result.failure is not None and result.failure.fault is GitFault.NETWORK
    assert len(sleeps) == 3 and all(0 < s <= 10 for s in sleeps)  # between the tries
