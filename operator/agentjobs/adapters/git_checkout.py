"""A repository checked out into a phase's workspace before its agent starts (R63).

Runs in a container of ours that holds the credentials; what it leaves behind is read by the
agent, so nothing of the credentials stays in it:

- The token reaches git only through the environment of the git processes run here
  (``GIT_CONFIG_COUNT``), as an ``Authorization`` header scoped to the repository's own
  scheme, host and port, so a redirect elsewhere never carries it. ``.git/config`` holds the
  remote's URL and nothing else of ours.
- The repository is fetched into an empty directory, only the one ref it needs, without
  submodules, hooks or any config of the host: a hostile repository's files are only files.
- A later phase starts from the commit the previous one ended on: fetched by its hash when
  it was pushed or never moved, else from the bundle of the work the previous phase stored
  (``bundle_work``), on top of the commit that bundle builds on.
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


@dataclass(frozen=True)
class Handed:
    """The work a previous phase left: its last commit, and the bundle of its commits since
    ``since`` (None: nothing new, the commit is on the remote)."""

    commit: str
    since: str
    bundle: Path | None


class NotEmpty(Exception):
    """The repository's directory already holds files: nothing is checked out over them."""


def remote_environment(url: str, credentials: GitCredentials | None, home: Path) -> dict[str, str]:
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
    handed: Handed | None = None,
) -> CheckedOut:
    """The repository at ``url`` checked out at ``target`` on ``branch``, from ``ref`` (the
    remote's HEAD when None) or from what ``handed`` says; raises GitFailed or NotEmpty."""
    target.mkdir(exist_ok=True)
    if any(target.iterdir()):
        raise NotEmpty(f"{target} is not empty")
    env = remote_environment(url, credentials, home)
    _git(target, env, "init", "-q")
    _git(target, env, "remote", "add", "origin", url)
    base_ref = ref or "HEAD"
    shallow = [f"--depth={depth}"] if depth else []
    _fetch(target, env, base_ref, shallow)
    base_commit = _git(target, env, "rev-parse", "FETCH_HEAD^{commit}")
    tracking = ref if ref is not None and not _COMMIT.fullmatch(ref) else "HEAD"
    _git(target, env, "update-ref", f"refs/remotes/origin/{tracking}", base_commit)
    if handed is not None:
        base_commit = _handed_commit(target, env, handed, branch, shallow)
    _git(target, env, "checkout", "-q", "-B", branch, base_commit)
    return CheckedOut(base_ref=base_ref, base_commit=base_commit, branch=branch)


def _fetch(target: Path, env: dict[str, str], ref: str, shallow: list[str]) -> None:
    """The one ref (or commit) from origin, without tags or submodules."""
    _git(
        target,
        env,
        "fetch",
        "-q",
        "--no-tags",
        "--no-recurse-submodules",
        *shallow,
        "--end-of-options",  # a ref is never read as an option, whatever admitted it
        "origin",
        ref,
    )


def _has_commit(target: Path, env: dict[str, str], commit: str) -> bool:
    try:
        _git(target, env, "cat-file", "-e", f"{commit}^{{commit}}")
    except GitFailed:
        return False
    return True


def _handed_commit(
    target: Path, env: dict[str, str], handed: Handed, branch: str, shallow: list[str]
) -> str:
    if not _has_commit(target, env, handed.since):
        _fetch(target, env, handed.since, shallow)
    if handed.bundle is not None:
        # Unbundled rather than fetched: the file transport stays forbidden.
        heads = _git(target, env, "bundle", "unbundle", str(handed.bundle)).splitlines()
        ended = next(
            (line.split()[0] for line in heads if line.endswith(f" refs/heads/{branch}")), ""
        )
        if ended != handed.commit:
            raise GitFailed(
                f"fatal: the handed bundle ends at {ended}, not at {handed.commit}".encode()
            )
    elif handed.commit != handed.since:
        raise GitFailed(b"fatal: handed work without its bundle")
    return handed.commit


def bundle_work(env: dict[str, str], *, branch: str, head: str, since: str, out: Path) -> bool:
    """The commits ``since..head`` as a bundle at ``out`` whose one ref is ``branch``; False
    when there are none. ``env``'s GIT_DIR is written (the ref), so it must be ours."""
    directory = Path(env["GIT_DIR"])
    if _git(directory, env, "rev-list", "--count", f"{since}..{head}") == "0":
        return False
    _git(directory, env, "update-ref", f"refs/heads/{branch}", head)
    _git(directory, env, "bundle", "create", "-q", str(out), f"refs/heads/{branch}", f"^{since}")
    return True


def git_diff(target: Path, base: str, head: str) -> bytes:
    """``base..head`` of the repository at ``target`` (one we checked out: its config is
    ours), as a binary diff ``git apply`` takes; no external diff or textconv runs."""
    env = remote_environment("", None, target)
    settings = [item for setting in _SETTINGS for item in ("-c", setting)]
    done = subprocess.run(
        ["git", *settings, "-C", str(target), "diff", "--binary", "--no-ext-diff",
         "--no-textconv", "--no-color", "--end-of-options", base, head],
        env=env, capture_output=True, timeout=FETCH_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise GitFailed(done.stderr)
    return done.stdout
