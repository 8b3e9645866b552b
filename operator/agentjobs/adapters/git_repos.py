"""Git repositories an agent left in its workspace, read without running what they configure.

The harvester holds the attempt's storage token and the agent wrote the
repository, so nothing in it may choose what runs, what is read, or how long
it takes:

- The files that say where things stand (``HEAD``, ``config``, refs,
  ``packed-refs``, ``shallow``) are read here, each opened beneath the
  ``.git`` directory one component at a time with ``O_NOFOLLOW``, only as a
  regular file (never a FIFO that would block), and capped in size.
- git itself runs against a *shadow* git directory in the harvester's private
  scratch space: its own ``HEAD``, ``config`` (bare) and ``shallow``, no refs,
  and the agent's objects given as ``GIT_OBJECT_DIRECTORY`` through
  ``/proc/self/fd`` of the directory opened here. So git never reads the
  agent's config (``core.fsmonitor``, ``core.hooksPath``, ``diff.external``,
  ``core.pager``, aliases, includes, textconv or filter drivers, signature
  files), hooks, ``info/attributes``, grafts, replace refs or work tree
  (``.gitattributes``); ``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``
  and ``HOME`` in the shadow rule out any other config, and
  ``--no-ext-diff --no-textconv`` plus ``core.fsmonitor=false`` and
  ``core.hooksPath=/dev/null`` are passed as well. Inside the objects
  directory git may follow a link the agent made, but it only ever takes
  valid git objects from what it reads there.
- Each git runs under ``prlimit`` (address space and output file size) with
  a timeout, in an environment that holds nothing of the harvester's (no
  token), writing to a file in the scratch space; a limit hit is a clear
  reason, never a hang.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MAX_DIRECTORY_ENTRIES = 100_000
MAX_REF_DEPTH = 16
MAX_LOOSE_REFS = 10_000
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SHADOW_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
# Settings that would run a program or grow without bound, set whatever the defaults are.
_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.packedGitWindowSize=16m",
    "core.packedGitLimit=128m",
    "core.deltaBaseCacheLimit=32m",
    # The agent's commit-graph could misstate parents and generations: read the commits.
    "core.commitGraph=false",
    "core.multiPackIndex=false",
    "log.showSignature=false",
    "format.signature=",
    "protocol.allow=never",
)


class RepositoryProblem(Exception):
    """A repository that cannot be read safely, and why (for its record)."""


@dataclass(frozen=True)
class FoundRepository:
    """A directory under the workspace holding ``.git``; ``problem`` if it is not read."""

    repo: str
    problem: str | None = None


def _entries(directory: int) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as scan:
        entries = []
        for entry in scan:
            entries.append(entry)
            if len(entries) >= MAX_DIRECTORY_ENTRIES:
                break
    return sorted(entries, key=lambda entry: entry.name)


def _git_kind(directory: int) -> str | None:
    try:
        info = os.stat(".git", dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return "directory" if stat.S_ISDIR(info.st_mode) else "other"


def find_repositories(
    workspace: Path, *, not_entered: frozenset[str], max_depth: int, max_found: int
) -> list[FoundRepository]:
    """Directories up to ``max_depth`` below ``workspace`` (never through a link) that hold
    ``.git``, in path order; at most ``max_found``, the first beyond it recorded as over."""
    found: list[FoundRepository] = []

    def walk(directory: int, prefix: str, depth: int) -> None:
        for entry in _entries(directory):
            if len(found) > max_found or (depth == 1 and entry.name in not_entered):
                continue
            if entry.name == ".git" or not entry.is_dir(follow_symlinks=False):
                continue
            repo = f"{prefix}{entry.name}"
            try:
                child = os.open(entry.name, _DIRECTORY, dir_fd=directory)
            except OSError:
                continue  # unreadable, or replaced by a link since it was listed
            try:
                kind = _git_kind(child)
                if kind is not None and len(found) == max_found:
                    found.append(FoundRepository(repo, f"over the cap of {max_found} repositories"))
                elif kind == "directory":
                    found.append(FoundRepository(repo))
                elif kind == "other":
                    found.append(
                        FoundRepository(
                            repo, "its .git is not a directory (a worktree, submodule or link)"
                        )
                    )
                if depth < max_depth:
                    walk(child, f"{repo}/", depth + 1)
            finally:
                os.close(child)

    try:
        root = os.open(workspace, _DIRECTORY)
    except OSError:
        return []
    try:
        walk(root, "", 1)
    finally:
        os.close(root)
    return found


def _open_beneath(directory: int, relative: str, flags: int) -> int:
    """``relative`` opened beneath ``directory``, no component through a link."""
    parts = relative.split("/")
    current = directory
    try:
        for part in parts[:-1]:
            following = os.open(part, _DIRECTORY, dir_fd=current)
            if current != directory:
                os.close(current)
            current = following
        return os.open(parts[-1], flags, dir_fd=current)
    finally:
        if current != directory:
            os.close(current)


class GitDirectory:
    """A repository's ``.git`` directory, opened once; its files read without a link."""

    def __init__(self, descriptor: int, repo: str) -> None:
        self.descriptor = descriptor
        self.repo = repo

    def read(self, relative: str, *, max_bytes: int) -> bytes | None:
        """A regular file's bytes, None if it does not exist; RepositoryProblem otherwise."""
        try:
            descriptor = _open_beneath(self.descriptor, relative, _FILE)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise RepositoryProblem(f".git/{relative} cannot be opened: {error.strerror}") from None
        with os.fdopen(descriptor, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise RepositoryProblem(f".git/{relative} is not a regular file")
            if info.st_size > max_bytes:
                raise RepositoryProblem(f".git/{relative} is over {max_bytes} bytes")
            return file.read(max_bytes + 1)[:max_bytes]

    def loose_refs(self, under: str, *, max_bytes: int) -> dict[str, bytes]:
        """Every loose ref file below ``under`` (e.g. ``refs/remotes``): name -> bytes."""
        refs: dict[str, bytes] = {}

        def walk(directory: int, prefix: str, depth: int) -> None:
            for entry in _entries(directory):
                name = f"{prefix}/{entry.name}"
                if entry.is_dir(follow_symlinks=False) and depth < MAX_REF_DEPTH:
                    child = os.open(entry.name, _DIRECTORY, dir_fd=directory)
                    try:
                        walk(child, name, depth + 1)
                    finally:
                        os.close(child)
                elif entry.is_file(follow_symlinks=False):
                    data = self.read(name, max_bytes=max_bytes)
                    if data is not None:
                        refs[name] = data
                if len(refs) > MAX_LOOSE_REFS:
                    raise RepositoryProblem(f"over {MAX_LOOSE_REFS} refs under .git/{under}")

        try:
            start = _open_beneath(self.descriptor, under, _DIRECTORY)
        except FileNotFoundError:
            return refs
        except OSError as error:
            raise RepositoryProblem(f".git/{under} cannot be opened: {error.strerror}") from None
        try:
            walk(start, under, 1)
        finally:
            os.close(start)
        return refs

    @contextmanager
    def objects(self) -> Iterator[int]:
        """The objects directory, opened (a real directory, not a link)."""
        try:
            descriptor = os.open("objects", _DIRECTORY, dir_fd=self.descriptor)
        except OSError as error:
            raise RepositoryProblem(f".git/objects cannot be opened: {error.strerror}") from None
        try:
            yield descriptor
        finally:
            os.close(descriptor)


def _directory_beneath(workspace: Path, relative: str, what: str) -> int:
    """``<workspace>/<relative>``, a directory opened without following a link."""
    try:
        root = os.open(workspace, _DIRECTORY)
    except OSError as error:
        raise RepositoryProblem(f"the workspace cannot be opened: {error.strerror}") from None
    try:
        return _open_beneath(root, relative, _DIRECTORY)
    except OSError as error:
        raise RepositoryProblem(f"{what} cannot be opened: {error.strerror}") from None
    finally:
        os.close(root)


@contextmanager
def work_tree(workspace: Path, repo: str) -> Iterator[int]:
    """``<workspace>/<repo>``, opened as a directory without following a link."""
    descriptor = _directory_beneath(workspace, repo, "its work tree")
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextmanager
def git_directory(workspace: Path, repo: str) -> Iterator[GitDirectory]:
    """``<workspace>/<repo>/.git``, opened without following a link."""
    descriptor = _directory_beneath(workspace, f"{repo}/.git", "its .git")
    try:
        yield GitDirectory(descriptor, repo)
    finally:
        os.close(descriptor)


class GitFailed(Exception):
    """A git command that did not succeed, and why, in words for a record."""


class ShadowGit:
    """git run on an agent's objects through a shadow git directory of our own."""

    def __init__(
        self,
        shadow: Path,
        objects: int,
        *,
        shallow: bytes | None,
        timeout: float,
        memory_bytes: int,
        output_bytes: int,
    ) -> None:
        shadow.mkdir(mode=0o700)
        (shadow / "refs").mkdir()
        (shadow / "HEAD").write_bytes(b"ref: refs/heads/agentjobs-shadow\n")
        (shadow / "config").write_bytes(_SHADOW_CONFIG)
        if shallow is not None:
            (shadow / "shallow").write_bytes(shallow)
        self.shadow = shadow
        self._objects = objects
        self._timeout = timeout
        self._memory_bytes = memory_bytes
        self._output_bytes = output_bytes

    def _environment(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.shadow),
            "XDG_CONFIG_HOME": str(self.shadow),
            "LC_ALL": "C",
            "GIT_DIR": str(self.shadow),
            "GIT_OBJECT_DIRECTORY": f"/proc/self/fd/{self._objects}",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
        }

    def borrowed_environment(self) -> dict[str, str]:
        """The environment for git run by other adapters, which pass no descriptor: the
        agent's objects are an alternate, reached through this process's own ``/proc``
        entry while it waits for them, and new objects (a rewritten commit) go to the
        shadow's own objects directory, never into the agent's repository."""
        objects = self.shadow / "objects"
        objects.mkdir(exist_ok=True)
        return self._environment() | {
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": f"/proc/{os.getpid()}/fd/{self._objects}",
        }

    def run_on_work_tree(
        self, arguments: Sequence[str], *, work_tree: int, index: Path, output: Path
    ) -> None:
        """``git <arguments>`` on the work tree opened as ``work_tree`` (a directory opened
        without following a link), with an index of our own and new objects in the
        shadow's own directory (the borrowed environment)."""
        self.run(
            arguments,
            stdin=b"",
            output=output,
            environment=self.borrowed_environment()
            | {"GIT_WORK_TREE": f"/proc/self/fd/{work_tree}", "GIT_INDEX_FILE": str(index)},
            fds=(work_tree,),
        )

    def run(
        self,
        arguments: Sequence[str],
        *,
        stdin: bytes,
        output: Path,
        environment: Mapping[str, str] | None = None,
        fds: tuple[int, ...] = (),
    ) -> None:
        """``git <arguments>`` with its standard output written to ``output``."""
        command = [
            "prlimit",
            f"--as={self._memory_bytes}",
            f"--fsize={self._output_bytes}",
            "--",
            "git",
            *(item for setting in _SETTINGS for item in ("-c", setting)),
            *arguments,
        ]
        what = f"git {arguments[0]}"
        with open(output, "wb") as destination:
            try:
                finished = subprocess.run(
                    command,
                    input=stdin,
                    stdout=destination,
                    stderr=subprocess.PIPE,
                    env=dict(environment or self._environment()),
                    cwd=self.shadow,
                    pass_fds=(self._objects, *fds),
                    timeout=self._timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise GitFailed(f"{what} took longer than {self._timeout:g} s") from None
            except OSError as error:
                raise GitFailed(f"{what} could not be started: {error.strerror}") from None
        if finished.returncode == -signal.SIGXFSZ:
            raise GitFailed(f"{what} wrote more than the cap of {self._output_bytes} bytes")
        if finished.returncode != 0:
            message = finished.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = message[-1][:300] if message else f"exit status {finished.returncode}"
            raise GitFailed(f"{what} failed: {detail}")

    def output(self, arguments: Sequence[str], *, stdin: bytes, name: str) -> bytes:
        """``git <arguments>``'s standard output (capped as any output is)."""
        path = self.shadow / name
        self.run(arguments, stdin=stdin, output=path)
        return path.read_bytes()
