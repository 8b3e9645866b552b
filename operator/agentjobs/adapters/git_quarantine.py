"""A phase's commits again, without their changes to ``.github/workflows/`` (issue 25).

A forge refuses a push whose commits change workflows when the credentials lack the grant
for it. The work is then pushed once more as the same commits (messages, authors, committers
and dates) whose trees keep ``.github/workflows/`` as the base had it; R52's
``workflow-changes.patch`` holds what was left out. A commit that changed nothing else is
left out whole rather than pushed empty. Merge commits are not rewritten: their history
is refused as it is.

git runs here on a repository given by its environment (``GIT_DIR``, and the object
directories a caller chooses), writing only objects and a private index: no ref, and no file
of the (empty, private) work tree it is given.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

WORKFLOWS = ".github/workflows"
_FORMAT = "%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd"
_IDENTITY = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
)


class CannotQuarantine(Exception):
    """The commits cannot be rewritten without their workflow changes, and why."""


def _git(env: Mapping[str, str], *arguments: str, stdin: bytes = b"") -> bytes:
    done = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *arguments],
        input=stdin,
        env=dict(env),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip()
        raise CannotQuarantine(f"git {arguments[0]} failed: {said}")
    return done.stdout


def _tree_without_workflows(env: Mapping[str, str], commit: str, base: str) -> str:
    _git(env, "read-tree", commit)
    paths = _git(env, "ls-files", "-z", "--", WORKFLOWS)
    _git(env, "update-index", "-z", "--force-remove", "--stdin", stdin=paths)
    kept = _git(env, "ls-tree", "-d", "--format=%(objectname)", base, "--", WORKFLOWS).strip()
    if kept:
        _git(env, "read-tree", f"--prefix={WORKFLOWS}/", kept.decode())
    return _git(env, "write-tree").decode().strip()


def without_workflow_changes(env: Mapping[str, str], base: str, head: str) -> str:
    """The new head: the commits ``base..head`` again, their workflow changes left out."""
    commits = _git(env, "rev-list", "--reverse", "--topo-order", f"{base}..{head}").split()
    with tempfile.TemporaryDirectory(prefix="agentjobs-quarantine-") as scratch:
        # An empty work tree of our own: update-index wants one, even on a bare repository,
        # and no file of it is read or written.
        empty = Path(scratch) / "work-tree"
        empty.mkdir()
        own = {**env, "GIT_INDEX_FILE": str(Path(scratch) / "index"), "GIT_WORK_TREE": str(empty)}
        parent = base
        for raw in commits:
            commit = raw.decode()
            parents = _git(own, "rev-list", "--parents", "-n", "1", commit).split()[1:]
            if len(parents) != 1:
                raise CannotQuarantine(f"commit {commit[:12]} is a merge: it is not rewritten")
            tree = _tree_without_workflows(own, commit, base)
            if tree == _git(own, "rev-parse", f"{parent}^{{tree}}").decode().strip():
                continue  # it changed only workflows
            who = _git(own, "log", "-1", f"--format={_FORMAT}", "--date=raw", commit)
            identity = dict(zip(_IDENTITY, who.decode().rstrip("\n").split("\0"), strict=True))
            message = _git(own, "cat-file", "commit", commit).split(b"\n\n", 1)[1]
            parent = (
                _git(
                    {**own, **identity}, "commit-tree", tree, "-p", parent, "-F", "-", stdin=message
                )
                .decode()
                .strip()
            )
    return parent
