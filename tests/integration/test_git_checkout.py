"""A repository checked out for a phase (adapters/git_checkout.py), against the real git server.

Cases: the remote's HEAD is checked out on the work branch with the server's commit, tracked as
origin/HEAD, and nothing of the token is left in the repository; a branch is fetched shallow
when depth says so; a wrong token, a missing repository and a missing ref fail with what git
printed, read by R62 as auth, not_found and not_found; a directory that is not empty is left
alone; a later phase starts from the commit the last one ended on, from its bundle, also
shallow and after the remote moved on; no new commit needs no bundle; a bundle that ends
elsewhere is refused.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters.git_checkout import (
    GitCredentials,
    GitFailed,
    Handed,
    NotEmpty,
    bundle_work,
    check_out,
)
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
    target.parent.mkdir(parents=True, exist_ok=True)
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


def commit_all(work: Path, path: str, text: str, message: str) -> str:
    (work / path).write_text(text)
    git(work, "add", "-A")
    git(work, "-c", "user.name=agent", "-c", "user.email=a@example.test", "commit", "-q",
        "-m", message)  # fmt: skip
    return git(work, "rev-parse", "HEAD")


@pytest.mark.parametrize("depth", [None, 1])
def test_the_next_phase_starts_where_the_last_ended_even_after_the_remote_moved(
    server: GitServer, tmp_path: Path, depth: int | None
) -> None:
    first = run(server, tmp_path / "one", depth=depth)
    since = git(first, "rev-parse", "HEAD")
    commit_all(first, "src/app.py", "print(2)\n", "Print two")
    head = commit_all(first, "notes.md", "notes\n", "Add notes")
    bundle = tmp_path / "work.bundle"
    env = {"PATH": os.environ["PATH"], "GIT_DIR": str(first / ".git"), "HOME": str(tmp_path)}
    assert bundle_work(env, branch="agentjobs/fix-1", head=head, since=since, out=bundle)
    # Someone else moves the remote's main on meanwhile.
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(server.root / "service.git"), str(other)], check=True)
    commit_all(other, "README.md", "moved on\n", "Move on")
    git(other, "push", "-q", "origin", "main")

    target = tmp_path / "two" / "service"
    target.parent.mkdir()
    checked = check_out(
        url=server.url("service"), ref=None, depth=depth, branch="agentjobs/fix-1", target=target,
        credentials=GitCredentials(TOKEN.value), home=tmp_path,
        handed=Handed(commit=head, since=since, bundle=bundle),
    )  # fmt: skip
    assert checked.base_commit == head
    assert git(target, "rev-parse", "HEAD") == head
    assert git(target, "symbolic-ref", "HEAD") == "refs/heads/agentjobs/fix-1"
    assert (target / "notes.md").read_text() == "notes\n"
    assert git(target, "rev-parse", "refs/remotes/origin/HEAD") == served_head(server)
    assert git(target, "status", "--porcelain") == ""


def test_no_new_commit_needs_no_bundle(server: GitServer, tmp_path: Path) -> None:
    first = run(server, tmp_path / "one")
    since = git(first, "rev-parse", "HEAD")
    env = {"PATH": os.environ["PATH"], "GIT_DIR": str(first / ".git"), "HOME": str(tmp_path)}
    assert not bundle_work(env, branch="b", head=since, since=since, out=tmp_path / "x.bundle")
    target = tmp_path / "two" / "service"
    target.parent.mkdir()
    checked = check_out(
        url=server.url("service"), ref="main", depth=None, branch="agentjobs/fix-1",
        target=target, credentials=GitCredentials(TOKEN.value), home=tmp_path,
        handed=Handed(commit=since, since=since, bundle=None),
    )  # fmt: skip
    assert checked.base_commit == since == git(target, "rev-parse", "HEAD")


def test_a_bundle_that_ends_elsewhere_is_refused(server: GitServer, tmp_path: Path) -> None:
    first = run(server, tmp_path / "one")
    since = git(first, "rev-parse", "HEAD")
    head = commit_all(first, "notes.md", "notes\n", "Add notes")
    env = {"PATH": os.environ["PATH"], "GIT_DIR": str(first / ".git"), "HOME": str(tmp_path)}
    bundle_work(env, branch="agentjobs/fix-1", head=head, since=since, out=tmp_path / "w.bundle")
    target = tmp_path / "two" / "service"
    target.parent.mkdir()
    with pytest.raises(GitFailed, match="ends at"):
        check_out(
            url=server.url("service"), ref=None, depth=None, branch="agentjobs/fix-1",
            target=target, credentials=GitCredentials(TOKEN.value), home=tmp_path,
            handed=Handed(commit="f" * 40, since=since, bundle=tmp_path / "w.bundle"),
        )  # fmt: skip


def test_a_ref_that_looks_like_an_option_is_only_a_ref(server: GitServer, tmp_path: Path) -> None:
    """The API refuses such a ref; an object admitted otherwise still runs nothing."""
    sprung = tmp_path / "sprung"
    with pytest.raises(GitFailed) as failed:
        run(server, tmp_path, ref=f"--upload-pack=touch {sprung}")
    assert b"invalid refspec" in failed.value.stderr
    assert not sprung.exists()
