"""A repository checked out for a phase (adapters/git_checkout.py), against the real git server.

Cases: the remote's HEAD is checked out on the work branch with the server's commit, tracked as
origin/HEAD, and nothing of the token is left in the repository; a branch is fetched shallow
when depth says so; a wrong token, a missing repository and a missing ref fail with what git
printed, read by R62 as auth, not_found and not_found; a directory that is not empty is left
alone.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters.git_checkout import GitCredentials, GitFailed, NotEmpty, check_out
from agentjobs.contract.repositories.git_errors import GitFault, classify
from devcluster.git_server import GitServer, Token

TOKEN = Token("checkout-token-0123456789")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(tmp_path / "server", tokens=[TOKEN]) as served:
        served.create("service", {"README.md": "hello\n", "src/app.py": "print(1)\n"})
        yield served


def git(directory: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), *arguments], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def served_head(server: GitServer) -> str:
    return git(server.root / "service.git", "rev-parse", "refs/heads/main")


def run(
    server: GitServer, tmp_path: Path, *, ref: str | None = None, depth: int | None = None,
    token: str = TOKEN.value, name: str = "service",
) -> Path:  # fmt: skip
    target = tmp_path / "workspace" / "service"
    target.parent.mkdir(exist_ok=True)
    checked = check_out(
        url=server.url(name), ref=ref, depth=depth, branch="agentjobs/fix-1", target=target,
        credentials=GitCredentials(token), home=tmp_path,
    )  # fmt: skip
    assert checked.base_commit == served_head(server)
    assert checked.branch == "agentjobs/fix-1"
    return target


def test_the_remote_head_is_checked_out_on_the_work_branch_and_no_token_is_left(
    server: GitServer, tmp_path: Path
) -> None:
    target = run(server, tmp_path)
    assert (target / "src" / "app.py").read_text() == "print(1)\n"
    assert git(target, "symbolic-ref", "HEAD") == "refs/heads/agentjobs/fix-1"
    assert git(target, "rev-parse", "HEAD") == served_head(server)
    assert git(target, "rev-parse", "refs/remotes/origin/HEAD") == served_head(server)
    assert git(target, "status", "--porcelain") == ""
    left = b"".join(p.read_bytes() for p in (target / ".git").rglob("*") if p.is_file())
    assert TOKEN.value.encode() not in left
    assert b"Authorization" not in left and b"extraHeader" not in left
    assert git(target, "config", "remote.origin.url") == server.url("service")


def test_a_branch_is_fetched_shallow_when_depth_says_so(server: GitServer, tmp_path: Path) -> None:
    target = run(server, tmp_path, ref="main", depth=1)
    assert (target / ".git" / "shallow").read_text().strip() == served_head(server)
    assert git(target, "rev-parse", "refs/remotes/origin/main") == served_head(server)


@pytest.mark.parametrize(
    ("changes", "fault"),
    [
        ({"token": "wrong"}, GitFault.AUTH),
        ({"name": "missing"}, GitFault.NOT_FOUND),
        ({"ref": "no-such-branch"}, GitFault.NOT_FOUND),
    ],
    ids=["wrong-token", "missing-repository", "missing-ref"],
)
def test_a_refusal_fails_with_what_git_printed(
    server: GitServer, tmp_path: Path, changes: dict[str, str], fault: GitFault
) -> None:
    with pytest.raises(GitFailed) as failed:
        run(server, tmp_path, **changes)  # type: ignore[arg-type]
    assert classify(failed.value.stderr).fault is fault, failed.value.stderr


def test_a_directory_that_is_not_empty_is_left_alone(server: GitServer, tmp_path: Path) -> None:
    target = tmp_path / "workspace" / "service"
    target.mkdir(parents=True)
    (target / "notes.md").write_text("mine\n")
    with pytest.raises(NotEmpty):
        run(server, tmp_path)
    assert [p.name for p in target.iterdir()] == ["notes.md"]
