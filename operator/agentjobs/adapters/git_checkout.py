"""A repository checked out into a phase's workspace before its agent starts (R63).

Runs in a container of ours that holds the credentials; what it leaves behind is read by the
agent, so nothing of the credentials stays in it:

- The token reaches git only through the environment of the git processes run here
  (``GIT_CONFIG_COUNT``), as an ``Authorization`` header scoped to the repository's own
  scheme, host and port, so a redirect elsewhere never carries it. ``.git/config`` holds the
  remote's URL and nothing else of ours.
- The repository is fetched into an empty directory, only the one ref it needs, without
  submodules, hooks or any config of the host: a hostile repository's files are only files.
- The fetched commit is a remote-tracking ref (``origin/<ref>``, ``origin/HEAD`` for the
  remote's default branch or a commit), so R52 counts only the phase's own commits as
  unpushed.
- A failure is raised with what git printed, for R62 to read.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

FETCH_TIMEOUT_SECONDS = 600
_COMMIT = re.compile(r"[0-9a-f]{7,64}")
_SETTINGS = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "protocol.file.allow=never",
    "protocol.ext.allow=never",
    "submodule.recurse=false",
    "advice.detachedHead=false",
    "init.defaultBranch=main",
)


@dataclass(frozen=True)
class GitCredentials:
    token: str
    username: str = "x-access-token"


@dataclass(frozen=True)
class CheckedOut:
    """Where a checkout stands before the agent starts."""

    base_ref: str  # the ref fetched ("HEAD" for the remote's default branch)
    base_commit: str
    branch: str


class GitFailed(Exception):
    """A git command that failed; ``stderr`` is what it printed."""

    def __init__(self, stderr: bytes) -> None:
        super().__init__(stderr.decode("utf-8", errors="replace").strip())
        self.stderr = stderr


class NotEmpty(Exception):
    """The repository's directory already holds files: nothing is checked out over them."""


def _environment(url: str, credentials: GitCredentials | None, home: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS": "",
        "LC_ALL": "C",
    }
    if credentials is not None:
        parts = urlsplit(url)
        basic = base64.b64encode(f"{credentials.username}:{credentials.token}".encode()).decode()
        env |= {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"http.{parts.scheme}://{parts.netloc}/.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
        }
    return env


def _git(directory: Path, env: dict[str, str], *arguments: str) -> str:
    settings = [item for setting in _SETTINGS for item in ("-c", setting)]
    try:
        done = subprocess.run(
            ["git", *settings, "-C", str(directory), *arguments],
            env=env,
            capture_output=True,
            timeout=FETCH_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        said = expired.stderr or b""
        raise GitFailed(
            said + b"\nfatal: git timed out after %d s" % FETCH_TIMEOUT_SECONDS
        ) from None
    if done.returncode != 0:
        raise GitFailed(done.stderr)
    return done.stdout.decode("utf-8", errors="replace").strip()


def check_out(
    *,
    url: str,
    ref: str | None,
    depth: int | None,
    branch: str,
    target: Path,
    credentials: GitCredentials | None,
    home: Path,
) -> CheckedOut:
    """The repository at ``url`` checked out at ``target`` on ``branch``, from ``ref`` (the
    remote's HEAD when None); raises GitFailed or NotEmpty."""
    target.mkdir(exist_ok=True)
    if any(target.iterdir()):
        raise NotEmpty(f"{target} is not empty")
    env = _environment(url, credentials, home)
    _git(target, env, "init", "-q")
    _git(target, env, "remote", "add", "origin", url)
    base_ref = ref or "HEAD"
    shallow = [f"--depth={depth}"] if depth else []
    _git(
        target,
        env,
        "fetch",
        "-q",
        "--no-tags",
        "--no-recurse-submodules",
        *shallow,
        "origin",
        base_ref,
    )
    base_commit = _git(target, env, "rev-parse", "FETCH_HEAD^{commit}")
    tracking = ref if ref is not None and not _COMMIT.fullmatch(ref) else "HEAD"
    _git(target, env, "update-ref", f"refs/remotes/origin/{tracking}", base_commit)
    _git(target, env, "checkout", "-q", "-B", branch, base_commit)
    return CheckedOut(base_ref=base_ref, base_commit=base_commit, branch=branch)
