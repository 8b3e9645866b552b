"""R52 in the harvester: each git repository under /workspace, its unpushed commits as patches.

The adapter (:mod:`agentjobs.adapters.git_repos`) reads a repository's files
and runs git safely; :mod:`agentjobs.contract.artifacts.unpushed_work` decides what they
mean. This module walks one repository through it: HEAD, upstream, the
commits not on it, ``unpushed.patch`` and ``workflow-changes.patch`` written
into the scratch directory for the harvester to upload. Whatever goes wrong
in one repository is its record's ``skipped`` reason; the others go on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

from agentjobs.adapters import git_repos
from agentjobs.contract.artifacts import unpushed_work
from agentjobs.contract.artifacts.unpushed_work import BadRepository, WorkLimits
from agentjobs.models.storage import RepositoryRecord

logger = logging.getLogger("agentjobs.harvester")
FORMAT_PATCH = (
    "format-patch",
    "--stdout",
    "--stdin",
    "--no-signature",
    "--no-notes",
    "--no-ext-diff",
    "--no-textconv",
    "--binary",
    "--full-index",
)


@dataclass(frozen=True)
class FoundWork:
    """A repository's record (patches not yet stored) and the patch files made for it."""

    record: RepositoryRecord
    unpushed: Path | None = None
    workflow: Path | None = None


def resolve(git_dir: git_repos.GitDirectory, ref: str, packed: dict[str, str], cap: int) -> str:
    loose = git_dir.read(ref, max_bytes=cap)
    if loose is not None:
        return unpushed_work.parse_loose_ref(loose)
    if ref in packed:
        return packed[ref]
    raise BadRepository(f"{ref} does not exist")


def _remote_tracking(
    git_dir: git_repos.GitDirectory, packed: dict[str, str], cap: int
) -> list[str]:
    """The commit ids of every remote-tracking ref (symbolic ones, such as
    ``origin/HEAD``, name a ref already counted)."""
    ids = {object_id for ref, object_id in packed.items() if ref.startswith("refs/remotes/")}
    for ref, data in git_dir.loose_refs("refs/remotes", max_bytes=cap).items():
        if unpushed_work.is_ref_name(ref) and not data.startswith(b"ref:"):
            ids.add(unpushed_work.parse_loose_ref(data))
    return sorted(ids)


def shadow_git(
    git_dir: git_repos.GitDirectory, objects: int, scratch: Path, limits: WorkLimits
) -> git_repos.ShadowGit:
    """git on the agent's objects ``objects``, through a shadow directory in ``scratch``,
    within ``limits``."""
    return git_repos.ShadowGit(
        scratch / "git",
        objects,
        shallow=git_dir.read("shallow", max_bytes=limits.max_ref_file_bytes),
        timeout=limits.git_timeout_seconds,
        memory_bytes=limits.git_memory_bytes,
        output_bytes=limits.max_patch_bytes,
    )


class _Progress:
    """The record as far as it is known, so that a skipped repository keeps it."""

    def __init__(self, repo: str) -> None:
        self.record = RepositoryRecord(repo=repo)

    def note(self, **fields: object) -> None:
        self.record = self.record.model_copy(update=fields)


def _scan_one(git_dir: git_repos.GitDirectory, scratch: Path, limits: WorkLimits) -> FoundWork:
    progress = _Progress(git_dir.repo)
    try:
        return _save(git_dir, scratch, limits, progress)
    except (BadRepository, git_repos.RepositoryProblem, git_repos.GitFailed) as problem:
        logger.warning("repository %s: %s", git_dir.repo, problem)
        progress.note(skipped=str(problem))
        return FoundWork(progress.record)


def _save(
    git_dir: git_repos.GitDirectory, scratch: Path, limits: WorkLimits, progress: _Progress
) -> FoundWork:
    cap = limits.max_ref_file_bytes
    head_file = git_dir.read("HEAD", max_bytes=cap)
    if head_file is None:
        raise BadRepository("it has no HEAD")
    head = unpushed_work.parse_head(head_file)
    progress.note(branch=head.branch)
    packed = unpushed_work.parse_packed_refs(git_dir.read("packed-refs", max_bytes=cap) or b"")
    with git_dir.objects() as objects:
        git = shadow_git(git_dir, objects, scratch, limits)
        config_copy = scratch / "agent-config"
        config_copy.write_bytes(git_dir.read("config", max_bytes=cap) or b"")
        config = unpushed_work.parse_config_list(
            git.output(
                ["config", "--no-includes", "--null", "--list", "--file", str(config_copy)],
                stdin=b"",
                name="config-list",
            )
        )
        if (problem := unpushed_work.object_format_problem(config)) is not None:
            raise BadRepository(problem)
        if head.branch is None:
            assert head.commit is not None
            commit = head.commit
        else:
            try:
                commit = resolve(git_dir, f"refs/heads/{head.branch}", packed, cap)
            except BadRepository:
                return FoundWork(progress.record)  # a branch without a commit yet
        progress.note(head=commit)
        upstream = unpushed_work.upstream_ref(head.branch, config) if head.branch else None
        try:
            bases = [resolve(git_dir, upstream, packed, cap)] if upstream else []
            progress.note(upstream=unpushed_work.short_ref(upstream) if upstream else None)
        except BadRepository:
            bases = []  # an upstream deleted on the remote and pruned here: as if none
        if not bases:
            bases = _remote_tracking(git_dir, packed, cap)
        return _patches(git, scratch, limits, progress, commit, bases)


def _patches(
    git: git_repos.ShadowGit,
    scratch: Path,
    limits: WorkLimits,
    progress: _Progress,
    commit: str,
    bases: list[str],
) -> FoundWork:
    """The commits reachable from ``commit`` and from none of ``bases``, as patch series."""
    revisions = "\n".join([commit, *(f"^{base}" for base in bases)]).encode() + b"\n"
    listed = git.output(
        ["rev-list", f"--max-count={limits.max_commits + 1}", "--stdin"],
        stdin=revisions,
        name="rev-list",
    ).split()
    if len(listed) > limits.max_commits:
        raise BadRepository(f"over {limits.max_commits} commits are not pushed")
    log = ["log", "-z", "--raw", "--no-renames", "--no-abbrev", "--no-merges", "--format=%H"]
    changes = unpushed_work.parse_changes(
        git.output([*log, "--stdin"], stdin=revisions, name="changes")
    )
    workflow_commits = unpushed_work.workflow_commits(changes)
    progress.note(
        commits=len(changes),
        merges_left_out=len(listed) - len(changes),
        workflow_commits=len(workflow_commits),
    )
    if not changes:
        return FoundWork(progress.record)
    unpushed = scratch / unpushed_work.UNPUSHED_PATCH
    git.run(FORMAT_PATCH, stdin=revisions, output=unpushed)
    if sorted(unpushed_work.series_commits(unpushed.read_bytes())) != sorted(
        item.commit for item in changes
    ):
        raise BadRepository("the patch series does not hold exactly the unpushed commits")
    if not workflow_commits:
        return FoundWork(progress.record, unpushed)
    workflow = scratch / unpushed_work.WORKFLOW_PATCH
    pathspec = unpushed_work.WORKFLOW_DIRECTORY.decode()
    git.run([*FORMAT_PATCH, "--", pathspec], stdin=revisions, output=workflow)
    if sorted(unpushed_work.series_commits(workflow.read_bytes())) != sorted(workflow_commits):
        raise BadRepository("the workflow series does not hold exactly the workflow commits")
    return FoundWork(progress.record, unpushed, workflow)


def _printable_name(repo: str) -> str | None:
    """Why a repository's name cannot be recorded as it is, if it cannot."""
    try:
        repo.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8; not read"
    return None if unpushed_work.is_repository_name(repo) else "its name cannot be stored"


def scan(workspace: Path, scratch: Path, limits: WorkLimits) -> list[FoundWork]:
    """Every repository under ``workspace`` (R52), each with its own scratch directory;
    those still waiting when ``limits.total_seconds`` have passed are skipped."""
    deadline = time.monotonic() + limits.total_seconds
    found = git_repos.find_repositories(
        workspace,
        not_entered=unpushed_work.NOT_ENTERED,
        max_depth=unpushed_work.MAX_DEPTH,
        max_found=limits.max_repositories,
    )
    results = []
    for index, repository in enumerate(found):
        repo = repository.repo
        problem = repository.problem or _printable_name(repo)
        if problem is None and time.monotonic() > deadline:
            problem = f"the {limits.total_seconds:g} s for reading repositories had passed"
        if problem is not None:
            shown = repo.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            results.append(FoundWork(RepositoryRecord(repo=shown, skipped=problem)))
            continue
        directory = scratch / f"repo-{index}"
        directory.mkdir(mode=0o700)
        try:
            with git_repos.git_directory(workspace, repo) as git_dir:
                results.append(_scan_one(git_dir, directory, limits))
        except git_repos.RepositoryProblem as error:
            results.append(FoundWork(RepositoryRecord(repo=repo, skipped=str(error))))
    return results
