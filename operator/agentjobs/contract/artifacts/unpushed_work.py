"""R52: the commits a phase left in git repositories under /workspace and did not push.

Pure: the harvester's adapter reads a repository's files (never following a
link) and runs git on them with every repository-configured program
disabled; this module decides what those bytes mean: which branch HEAD is on,
which ref is its upstream, which commits are not on it, which of them change
workflow files, and what the operator lists and writes about them.

Decisions where the issue is silent:

- A repository is a directory ``/workspace/<a>`` or ``/workspace/<a>/<b>``
  holding a ``.git`` directory; ``artifacts/`` (the harvester's own files)
  and ``.git`` are never entered. A ``.git`` *file* (a worktree or a
  submodule pointing elsewhere) is recorded as skipped: following it would
  read outside the repository.
- The base that counts as pushed is the branch's upstream
  (``branch.<name>.remote`` and ``.merge`` mapped through the remote's fetch
  refspecs). Without an upstream (a detached HEAD, a branch never pushed, one
  whose upstream ref was pruned), it is every remote-tracking ref
  (``refs/remotes/*``): commits reachable from none of them have left nowhere.
  A repository with no remote-tracking ref at all has never been pushed, so
  its whole history is its unpushed work.
- Merge commits cannot be in a ``git format-patch`` series; they are counted
  (``mergesLeftOut``), and the series holds the other commits.
- A workflow change is a change of a path under ``.github/workflows/``
  exactly (case-sensitive, at the repository's top); the workflow patch holds
  only those paths of only those commits.
- For a failed phase the patches are artifacts kept ``(kept from a failed
  phase)``; a cancelled or interrupted phase keeps them ``(partial)`` as R34
  keeps its other files. A completed phase's patches are stored and recorded
  in ``manifest.json`` but listed only for a repository whose push did not land
  (R64): its deliverable is its output, and its pushed work is on its branch.
- They are not handed on to a next phase: ``artifacts.json`` lists only
  what is stored under ``output/`` (R35).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentjobs.models.storage import RepositoryRecord, StoredPatch

WORK = "work"
UNPUSHED_PATCH = "unpushed.patch"
WORKFLOW_PATCH = "workflow-changes.patch"
WORK_BUNDLE = "work.bundle"  # R63: a checked-out repository's commits, for the next phase
WORKFLOW_DIRECTORY = b".github/workflows/"
NOT_ENTERED = frozenset({"artifacts", ".git"})
MAX_DEPTH = 2
_OBJECT_ID = re.compile(r"[0-9a-f]{40}")
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


class BadRepository(ValueError):
    """Repository files that do not say what git would need them to say."""


@dataclass(frozen=True)
class WorkLimits:
    """How much one final sync spends on repositories."""

    max_repositories: int = 16
    max_commits: int = 1000
    max_patch_bytes: int = 64 * 1024 * 1024
    git_timeout_seconds: float = 30.0
    total_seconds: float = 300.0
    git_memory_bytes: int = 512 * 1024 * 1024
    max_ref_file_bytes: int = 8 * 1024 * 1024


DEFAULT_LIMITS = WorkLimits()


@dataclass(frozen=True)
class Head:
    """Where HEAD points: a branch (``refs/heads/<branch>``) or, detached, a commit."""

    branch: str | None
    commit: str | None = None


@dataclass(frozen=True)
class CommitChanges:
    """One non-merge commit and the paths it changes (bytes, as git stores them)."""

    commit: str
    paths: tuple[bytes, ...]


def is_object_id(text: str) -> bool:
    return _OBJECT_ID.fullmatch(text) is not None


def is_ref_name(ref: str) -> bool:
    """The part of git's ref-name rules that keeps a name a plain path under ``refs/``."""
    if not ref.startswith("refs/") or ref.endswith(("/", ".", ".lock")) or "@{" in ref:
        return False
    if _REF_FORBIDDEN.search(ref) or ".." in ref:
        return False
    return all(part and not part.startswith(".") for part in ref.split("/"))


def parse_head(data: bytes) -> Head:
    """``HEAD``: ``ref: refs/heads/<branch>`` or a detached commit id."""
    text = data.decode("ascii", "replace").strip()
    if text.startswith("ref:"):
        ref = text.removeprefix("ref:").strip()
        if not ref.startswith("refs/heads/") or not is_ref_name(ref):
            raise BadRepository(f"HEAD names {ref!r}, not a branch")
        return Head(branch=ref.removeprefix("refs/heads/"))
    if is_object_id(text):
        return Head(branch=None, commit=text)
    raise BadRepository("HEAD is neither a branch nor a commit id")


def parse_loose_ref(data: bytes) -> str:
    """A loose ref file's commit id (a symbolic ref is not followed: BadRepository)."""
    text = data.decode("ascii", "replace").strip()
    if not is_object_id(text):
        raise BadRepository("a ref file that holds no commit id")
    return text


def parse_packed_refs(data: bytes) -> dict[str, str]:
    """``packed-refs``: ref name -> object id (peeled ``^`` lines and comments skipped)."""
    refs: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        if not line or line.startswith(("#", "^")):
            continue
        object_id, _, ref = line.partition(" ")
        if is_object_id(object_id) and is_ref_name(ref):
            refs[ref] = object_id
    return refs


def parse_config_list(data: bytes) -> dict[str, list[str]]:
    """``git config --null --list``: each ``key\\nvalue\\0``, values in file order."""
    config: dict[str, list[str]] = {}
    for item in data.decode("utf-8", "replace").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            config.setdefault(key, []).append(value)
    return config


def object_format_problem(config: Mapping[str, list[str]]) -> str | None:
    """Why a repository's object format cannot be read here, if it cannot."""
    formats = config.get("extensions.objectformat", [])
    if formats and formats[-1].lower() != "sha1":
        return f"its object format {formats[-1]!r} is not read (sha1 only)"
    return None


def _map_refspec(refspec: str, ref: str) -> str | None:
    source, _, destination = refspec.removeprefix("+").partition(":")
    if "*" not in source:
        return destination if source == ref and destination else None
    before, _, after = source.partition("*")
    if not ref.startswith(before) or not ref.endswith(after) or len(ref) < len(before + after):
        return None
    middle = ref[len(before) : len(ref) - len(after)]
    return destination.replace("*", middle, 1) if "*" in destination else None


def upstream_ref(branch: str, config: Mapping[str, list[str]]) -> str | None:
    """The ref that holds ``branch``'s upstream here, or None without one."""
    remotes = config.get(f"branch.{branch}.remote", [])
    merges = config.get(f"branch.{branch}.merge", [])
    if not remotes or not merges:
        return None
    remote, merge = remotes[-1], merges[-1]
    if remote == ".":
        return merge if is_ref_name(merge) else None
    for refspec in config.get(f"remote.{remote}.fetch", []):
        mapped = _map_refspec(refspec, merge)
        if mapped is not None and is_ref_name(mapped):
            return mapped
    return None


def short_ref(ref: str) -> str:
    """``refs/remotes/origin/main`` as people say it: ``origin/main``."""
    for prefix in ("refs/remotes/", "refs/heads/"):
        if ref.startswith(prefix):
            return ref.removeprefix(prefix)
    return ref


def parse_changes(data: bytes) -> list[CommitChanges]:
    """``git log -z --raw --no-renames --no-abbrev --format=%H``: each commit's paths.

    The stream is ``<id>`` tokens, each followed by ``:<modes ids status>``,
    ``<path>`` pairs; a token after a path (or at the start) is a header or a
    raw line, never a path, so the newline git puts before it is unambiguous.
    """
    tokens = data.split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    commits: list[CommitChanges] = []
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip(b"\n")
        index += 1
        if token.startswith(b":"):
            if not commits or index >= len(tokens):
                raise BadRepository("git log: a change outside any commit")
            last = commits[-1]
            commits[-1] = CommitChanges(last.commit, (*last.paths, tokens[index]))
            index += 1
            continue
        commit = token.decode("ascii", "replace")
        if not is_object_id(commit):
            raise BadRepository("git log: an unexpected token where a commit id belongs")
        commits.append(CommitChanges(commit, ()))
    return commits


def is_workflow_path(path: bytes) -> bool:
    """A file under ``.github/workflows/`` at the repository's top."""
    return path.startswith(WORKFLOW_DIRECTORY) and len(path) > len(WORKFLOW_DIRECTORY)


def workflow_commits(changes: Sequence[CommitChanges]) -> list[str]:
    """The commits that change at least one workflow file, in the order given."""
    return [item.commit for item in changes if any(is_workflow_path(p) for p in item.paths)]


def series_commits(patch: bytes) -> list[str]:
    """The commit ids a ``git format-patch --stdout`` series holds, in order."""
    found = re.findall(rb"^From ([0-9a-f]{40}) Mon Sep 17 00:00:00 2001$", patch, re.MULTILINE)
    return [item.decode() for item in found]


def is_repository_name(repo: str) -> bool:
    """A repository's path under /workspace as the harvester may record it."""
    parts = repo.split("/")
    return (
        0 < len(parts) <= MAX_DEPTH
        and all(part not in ("", ".", "..") and "\x00" not in part for part in parts)
        and parts[0] not in NOT_ENTERED
        and ".git" not in parts
        and len(repo.encode("utf-8", "surrogatepass")) <= 256
    )


def patch_path(repo: str, name: str) -> str:
    """The path a patch has among a phase's artifacts: ``work/<repo>/<name>``."""
    return f"{WORK}/{repo}/{name}"


def stored_patches(records: Sequence[RepositoryRecord]) -> list[tuple[str, StoredPatch]]:
    """Each stored patch with its artifact path, in path order.

    The manifest is written inside the agent's pod: a record whose repository
    name could not have come from the harvester's walk is ignored, and the
    path is derived here, never read from the record."""
    patches: list[tuple[str, StoredPatch]] = []
    for record in records:
        if not is_repository_name(record.repo):
            continue
        for name, patch in (
            (UNPUSHED_PATCH, record.unpushed_patch),
            (WORKFLOW_PATCH, record.workflow_patch),
        ):
            if patch is not None:
                patches.append((patch_path(record.repo, name), patch))
    return sorted(patches, key=lambda item: item[0])


def _describe(record: RepositoryRecord) -> str:
    where = f"on branch `{record.branch}`" if record.branch else "with a detached HEAD"
    head = f" at `{record.head[:12]}`" if record.head else ""
    upstream = f"`{record.upstream}`" if record.upstream else None
    line = f"- `/workspace/{record.repo}`: {where}{head}"
    if record.skipped is not None:
        return f"{line}; its unpushed commits could not be saved: {record.skipped}."
    if record.commits == 0 and record.merges_left_out == 0:
        return f"{line}; every commit is on {upstream or 'a remote-tracking branch'}."
    line += f"; {record.commits} commit(s) not on {upstream or 'any remote-tracking branch'}"
    if record.unpushed_patch is not None:
        line += f", saved as `{patch_path(record.repo, UNPUSHED_PATCH)}` (apply with `git am`)"
    if record.workflow_patch is not None:
        line += (
            f"; {record.workflow_commits} of them change `.github/workflows/`, saved apart as "
            f"`{patch_path(record.repo, WORKFLOW_PATCH)}`"
        )
    if record.merges_left_out:
        line += f"; {record.merges_left_out} merge commit(s) are not in the series"
    return line + "."


def work_section(records: Sequence[RepositoryRecord]) -> str | None:
    """R31's ``## Where this phase's work stands``, from what the harvester found."""
    if not records:
        return None
    lines = [_describe(record) for record in records if is_repository_name(record.repo)]
    if not lines:
        return None
    return "## Where this phase's work stands\n\n" + "\n".join(lines)
