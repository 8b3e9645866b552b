"""R52's scan of real repositories with real git, hostile ones included (no cluster).

Cases: two unpushed commits, one touching .github/workflows/, give a series
that ``git am`` turns back into the same trees, messages and authors, and a
workflow series of that commit's workflow part only; a hostile repository
(fsmonitor, hooks, external diff, pager, textconv and filter drivers through
.gitattributes, an include, a signature file, gpg) runs none of its programs
and leaks neither the harvester's environment nor a file it names; without
an upstream (or with one pruned) the base is every remote-tracking ref, and a
never-pushed repository's whole history is unpushed; an empty repository
has nothing to save; ``artifacts/`` and depth 3 are not
searched; a symlinked .git, a symlinked HEAD and a FIFO packed-refs are
skipped with a reason and never followed or waited on; a FIFO object times
out; the commit and patch-size caps give clear reasons; a merge is left out
and counted.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentjobs.contract.artifacts.unpushed_work import DEFAULT_LIMITS, WorkLimits
from agentjobs.models.storage import RepositoryRecord
from agentjobs.sidecars import work_scan

AUTHOR = {
    "GIT_AUTHOR_NAME": "Ada Agent",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Agent",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(directory: Path, *arguments: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(directory), **AUTHOR}
    return subprocess.run(
        ["git", "-C", str(directory), *arguments],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare origin with one commit on main, outside the workspace."""
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit(seed, {"README.md": "base\n"}, "Base")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    return bare


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "workspace").mkdir()
    return tmp_path / "workspace"


def clone(origin: Path, workspace: Path, name: str = "service") -> Path:
    git(workspace, "clone", "-q", str(origin), name)
    return workspace / name


def scan(
    workspace: Path, tmp_path: Path, limits: WorkLimits = DEFAULT_LIMITS
) -> list[work_scan.FoundWork]:
    scratch = tmp_path / f"scratch-{len(list(tmp_path.glob('scratch-*')))}"
    scratch.mkdir()
    return work_scan.scan(workspace, scratch, limits)


def only(found: list[work_scan.FoundWork]) -> work_scan.FoundWork:
    [item] = found
    return item


def history(repo: Path, revisions: str) -> str:
    return git(repo, "log", "--format=%T %an <%ae> %ad%n%B", revisions)


def test_two_unpushed_commits_become_a_series_that_git_am_reproduces(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    repo = clone(origin, workspace)
    commit(
        repo,
        {"src/app.py": "print('hi')\n", ".github/workflows/ci.yml": "on: push\n"},
        "Add the app and its CI\n\nWith a body paragraph.",
    )
    commit(repo, {"src/app.py": "print('hello')\n"}, "Greet properly")
    found = only(scan(workspace, tmp_path))
    assert found.record.model_dump(exclude={"head"}) == RepositoryRecord(
        repo="service", branch="main", upstream="origin/main", commits=2, workflow_commits=1
    ).model_dump(exclude={"head"})
    assert found.record.head == git(repo, "rev-parse", "HEAD").strip()
    assert found.unpushed is not None and found.workflow is not None
    replay = tmp_path / "replay"
    git(tmp_path, "clone", "-q", str(origin), str(replay))
    git(replay, "am", "-q", str(found.unpushed))
    assert history(replay, "origin/main..HEAD") == history(repo, "origin/main..HEAD")
    assert git(replay, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "HEAD^{tree}")
    workflow = found.workflow.read_text()
    assert workflow.count("\nSubject: ") == 1 and "Add the app and its CI" in workflow
    assert "diff --git a/.github/workflows/ci.yml" in workflow and "src/app.py" not in workflow


def test_a_hostile_repository_runs_none_of_its_programs_and_leaks_nothing(
    origin: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\ncat\n')
    script.chmod(0o755)
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("FILE-SECRET\n")
    monkeypatch.setenv("AGENTJOBS_CREDENTIALS_TOKEN", "ENV-SECRET-TOKEN")
    repo = clone(origin, workspace)
    hooks = repo / ".git" / "evil-hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-checkout", "reference-transaction", "pre-auto-gc"):
        (hooks / hook).symlink_to(script)
    included = tmp_path / "included.cfg"
    included.write_text(f"[core]\n\tfsmonitor = {script}\n")
    with open(repo / ".git" / "config", "a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n\tpager = {script}\n"
            f'[diff]\n\texternal = {script}\n[diff "evil"]\n\ttextconv = {script}\n'
            f'\tcommand = {script}\n[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n'
            f"[include]\n\tpath = {included}\n[format]\n\tsignatureFile = {secret_file}\n"
            f"\theaders = X-Leak: yes\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {script}\n"
            f"[alias]\n\tformat-patch = !{script}\n"
        )
    commit(repo, {".gitattributes": "* diff=evil filter=evil\n", "a.txt": "one\n"}, "Attributes")
    commit(repo, {".github/workflows/ci.yml": "on: push\n"}, "CI")
    ran.unlink(missing_ok=True)  # the commits above may well have run them
    found = only(scan(workspace, tmp_path))
    assert not ran.exists()
    assert found.record.skipped is None and found.record.commits == 2
    assert found.unpushed is not None and found.workflow is not None
    for patch in (found.unpushed, found.workflow):
        text = patch.read_text()
        assert "SECRET" not in text and "X-Leak" not in text
    assert "+one" in found.unpushed.read_text()  # the real diff, no textconv or driver
    git(repo, "diff", "HEAD~2")  # the traps are armed: plain git in the repository runs them
    assert ran.exists()


def test_without_an_upstream_the_base_is_every_remote_tracking_ref(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    repo = clone(origin, workspace)
    git(repo, "checkout", "-q", "-b", "topic")
    commit(repo, {"t.txt": "t\n"}, "Topic work")
    git(repo, "checkout", "-q", "--detach")
    commit(repo, {"d.txt": "d\n"}, "Detached work")
    fresh = workspace / "group" / "fresh"
    fresh.mkdir(parents=True)
    git(fresh, "init", "-q", "-b", "trunk")
    commit(fresh, {"x": "1\n"}, "One")
    commit(fresh, {"x": "2\n"}, "Two")
    found = {item.record.repo: item.record for item in scan(workspace, tmp_path)}
    assert (found["service"].branch, found["service"].upstream) == (None, None)
    assert found["service"].commits == 2
    assert (found["group/fresh"].branch, found["group/fresh"].commits) == ("trunk", 2)


def test_an_empty_repository_and_a_pruned_upstream(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    empty = workspace / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    repo = clone(origin, workspace)
    git(repo, "checkout", "-q", "-b", "gone")
    commit(repo, {"g.txt": "g\n"}, "Gone upstream")
    git(repo, "config", "branch.gone.remote", "origin")
    git(repo, "config", "branch.gone.merge", "refs/heads/gone")
    found = {item.record.repo: item.record for item in scan(workspace, tmp_path)}
    assert found["empty"] == RepositoryRecord(repo="empty", branch="main")
    service = found["service"]
    assert (service.branch, service.upstream, service.commits, service.skipped) == (
        "gone",
        None,
        1,
        None,
    )


def test_artifacts_and_deeper_directories_are_not_searched(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "artifacts" / "output").mkdir(parents=True)
    clone(origin, workspace / "artifacts" / "output", "hidden")
    (workspace / "a" / "b").mkdir(parents=True)
    clone(origin, workspace / "a" / "b", "c")
    assert scan(workspace, tmp_path) == []


def test_links_and_fifos_are_skipped_with_a_reason_never_followed_or_waited_on(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = clone(origin, tmp_path, "elsewhere")
    (workspace / "linked").mkdir()
    (workspace / "linked" / ".git").symlink_to(elsewhere / ".git")
    head_link = clone(origin, workspace, "head-link")
    (head_link / ".git" / "HEAD").unlink()
    (head_link / ".git" / "HEAD").symlink_to(elsewhere / ".git" / "HEAD")
    fifo = clone(origin, workspace, "fifo")
    os.mkfifo(fifo / ".git" / "packed-refs.new")
    (fifo / ".git" / "packed-refs").unlink(missing_ok=True)
    os.rename(fifo / ".git" / "packed-refs.new", fifo / ".git" / "packed-refs")
    found = {item.record.repo: item.record.skipped for item in scan(workspace, tmp_path)}
    assert found == {
        "fifo": ".git/packed-refs is not a regular file",
        "head-link": ".git/HEAD cannot be opened: Too many levels of symbolic links",
        "linked": "its .git is not a directory (a worktree, submodule or link)",
    }


def test_a_fifo_object_times_out_and_caps_give_clear_reasons(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    repo = clone(origin, workspace)
    commit(repo, {"big.txt": "x" * 100_000 + "\n"}, "Big")
    commit(repo, {"small.txt": "y\n"}, "Small")
    limits = WorkLimits(max_commits=1)
    assert only(scan(workspace, tmp_path, limits)).record.skipped == (
        "over 1 commits are not pushed"
    )
    limits = WorkLimits(max_patch_bytes=50_000)
    assert only(scan(workspace, tmp_path, limits)).record.skipped == (
        "git format-patch wrote more than the cap of 50000 bytes"
    )
    head = git(repo, "rev-parse", "HEAD").strip()
    loose = repo / ".git" / "objects" / head[:2] / head[2:]
    loose.unlink()
    os.mkfifo(loose)
    limits = WorkLimits(git_timeout_seconds=1)
    assert only(scan(workspace, tmp_path, limits)).record.skipped == (
        "git rev-list took longer than 1 s"
    )


def test_a_merge_is_left_out_of_the_series_and_counted(
    origin: Path, workspace: Path, tmp_path: Path
) -> None:
    repo = clone(origin, workspace)
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {"side.txt": "s\n"}, "Side")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"main.txt": "m\n"}, "Main")
    git(repo, "merge", "-q", "--no-edit", "side")
    record = only(scan(workspace, tmp_path)).record
    assert (record.commits, record.merges_left_out, record.skipped) == (2, 1, None)
