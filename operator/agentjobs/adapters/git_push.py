"""A phase's work branch pushed to its repository's server (issue 25).

The push names the URL itself, never a remote of the repository (whose config the agent
wrote), carries the credentials only in git's environment (as the checkout does), runs no
hook, and is never forced: a branch that moved on at the server refuses it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from agentjobs.adapters.git_checkout import GitCredentials, remote_environment

PUSH_TIMEOUT_SECONDS = 600
# What of the caller's environment names the repository pushed from.
_REPOSITORY = ("GIT_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES")


def push(
    repository: Mapping[str, str],
    *,
    url: str,
    credentials: GitCredentials | None,
    commit: str,
    branch: str,
    home: Path,
) -> bytes | None:
    """Push ``commit`` to ``branch`` at ``url``; None when it landed, else what git printed."""
    env = remote_environment(url, credentials, home) | {
        name: repository[name] for name in _REPOSITORY if name in repository
    }
    try:
        done = subprocess.run(
            [
                "git",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "protocol.file.allow=never",
                "push",
                "--quiet",
                "--no-verify",
                "--end-of-options",
                url,
                f"{commit}:refs/heads/{branch}",
            ],
            env=env,
            capture_output=True,
            timeout=PUSH_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        return (expired.stderr or b"") + b"\nfatal: git push timed out"
    return None if done.returncode == 0 else done.stderr
