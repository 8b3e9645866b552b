"""The test git server's pre-receive hook: refuses what a forge refuses, in its words.

Installed into each repository of :mod:`devcluster.git_server` (which puts the Python that
runs it on its first line); it reads the server's grants from the environment:

- a push to a branch listed in ``AGENTJOBS_GIT_PROTECTED`` is refused, as GitHub refuses
  a protected branch's update;
- unless ``AGENTJOBS_GIT_WORKFLOW_GRANT`` is ``1``, a push whose new commits change a path
  under ``.github/workflows/`` is refused, as GitHub refuses a token without the
  ``workflow`` scope.

It imports nothing but the standard library: git runs it as a program.
"""

from __future__ import annotations

import os
import subprocess
import sys

WORKFLOW_GRANT_ENV = "AGENTJOBS_GIT_WORKFLOW_GRANT"
PROTECTED_ENV = "AGENTJOBS_GIT_PROTECTED"
WORKFLOWS = ".github/workflows/"
NO_OBJECT = "0" * 40


def _git(*arguments: str) -> list[str]:
    out = subprocess.run(["git", *arguments], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _workflow_change(new: str) -> str | None:
    """The first workflow path a commit new to the repository changes, if any."""
    for commit in _git("rev-list", new, "--not", "--all"):
        changed = _git("diff-tree", "-r", "-m", "--root", "--no-commit-id", "--name-only", commit)
        for path in changed:
            if path.startswith(WORKFLOWS):
                return path
    return None


def refusals(updates: list[tuple[str, str, str]]) -> list[str]:
    granted = os.environ.get(WORKFLOW_GRANT_ENV) == "1"
    protected = set(os.environ.get(PROTECTED_ENV, "").split())
    refused = []
    for _old, new, ref in updates:
        if ref.removeprefix("refs/heads/") in protected:
            refused.append(f"error: GH006: Protected branch update failed for {ref}.")
            continue
        workflow = None if granted or new == NO_OBJECT else _workflow_change(new)
        if workflow is not None:
            refused.append(
                "refusing to allow a Personal Access Token to create or update workflow "
                f"`{workflow}` without `workflow` scope"
            )
    return refused


def main() -> int:
    updates = []
    for line in sys.stdin:
        old, new, ref = line.split()
        updates.append((old, new, ref))
    refused = refusals(updates)
    for message in refused:
        print(message, file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
