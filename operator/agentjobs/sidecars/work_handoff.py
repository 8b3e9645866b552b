"""R63 and R64 in the harvester: each checked-out repository's work bundled and pushed.

At the last sync, after R52's scan, for every repository the fetcher checked out (as it
recorded in a file the agent cannot write): the work branch's commit is read from the
agent's refs without running anything the repository configures, the commits since the
remote's commit the work builds on are stored as a git bundle (the next phase starts from
it), and, when pushing is on and there are commits, they are pushed
(:mod:`agentjobs.sidecars.work_push`). git runs on the agent's objects through a shadow git
directory of our own (:class:`agentjobs.adapters.git_repos.ShadowGit`). A repository that
cannot be read is recorded as skipped; the others go on.

Decisions where the issue is silent:

- The work is the work branch; an agent that deleted it left its work at HEAD, and that is
  what is handed on and pushed.
- With no commit since the base, nothing is pushed (``pushed`` stays null): a push would
  only create the branch at a commit the remote already has.
- Uncommitted changes are the work tree against the work branch's last commit, untracked
  files included and ignored ones left out (the repository's own ``.gitignore``), as a
  binary diff ``git apply`` takes: ``work/<repository>/uncommitted.patch``. They are never
  committed for the agent. The work tree is opened without following a link, and git adds
  its files to an index and objects of our own (a link is kept as a link).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from agentjobs.adapters import git_checkout, git_repos
from agentjobs.contract.artifacts import unpushed_work
from agentjobs.contract.artifacts.unpushed_work import BadRepository, WorkLimits
from agentjobs.models.storage import CheckoutRecord, StoredPatch
from agentjobs.sidecars import hydration, work_push, work_scan

logger = logging.getLogger("agentjobs.harvester")
BUNDLE = unpushed_work.WORK_BUNDLE
UNCOMMITTED = "uncommitted.patch"
DIFF = ("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-color")

StoreFile = Callable[[str, str, Path], StoredPatch]  # (repository, name, file) -> stored


def _head(git_dir: git_repos.GitDirectory, branch: str, cap: int) -> str:
    packed = unpushed_work.parse_packed_refs(git_dir.read("packed-refs", max_bytes=cap) or b"")
    try:
        return work_scan.resolve(git_dir, f"refs/heads/{branch}", packed, cap)
    except BadRepository:
        head_file = git_dir.read("HEAD", max_bytes=cap)
        if head_file is None:
            raise
        head = unpushed_work.parse_head(head_file)
        if head.branch is None:
            assert head.commit is not None
            return head.commit
        return work_scan.resolve(git_dir, f"refs/heads/{head.branch}", packed, cap)


def _record(started: hydration.Started) -> CheckoutRecord:
    """What is known of a checkout before its work is read: where it started."""
    return CheckoutRecord(
        name=started.name,
        base_ref=started.base_ref,
        base_commit=started.base_commit,
        since=started.since,
        branch=started.branch,
    )


def _uncommitted(
    shadow: git_repos.ShadowGit, workspace: Path, name: str, head: str, scratch: Path
) -> Path | None:
    """The work tree's changes against ``head`` as a patch file; None when there are none."""
    index = scratch / "uncommitted-index"
    patch = scratch / UNCOMMITTED
    with git_repos.work_tree(workspace, name) as tree:
        for arguments, output in (
            (["read-tree", head], scratch / "read-tree"),
            (["add", "--all"], scratch / "add"),
            ([*DIFF, head], patch),
        ):
            shadow.run_on_work_tree(arguments, work_tree=tree, index=index, output=output)
    return patch if patch.stat().st_size else None


def _one(
    started: hydration.Started,
    *,
    workspace: Path,
    scratch: Path,
    credentials_root: Path,
    limits: WorkLimits,
    store: StoreFile,
) -> CheckoutRecord:
    record = _record(started)
    with git_repos.git_directory(workspace, started.name) as git_dir:
        head = _head(git_dir, started.branch, limits.max_ref_file_bytes)
        with git_dir.objects() as objects:
            shadow = work_scan.shadow_git(git_dir, objects, scratch, limits)
            counted = shadow.output(
                ["rev-list", "--count", "--stdin"],
                stdin=f"{head}\n^{started.since}\n".encode(),
                name="count",
            )
            record = record.model_copy(update={"head": head, "commits": int(counted)})
            changes = _uncommitted(shadow, workspace, started.name, head, scratch)
            if changes is not None:
                stored = store(started.name, UNCOMMITTED, changes)
                record = record.model_copy(
                    update={"uncommitted_changes": True, "uncommitted_patch": stored}
                )
            env = shadow.borrowed_environment()
            bundle = scratch / BUNDLE
            if git_checkout.bundle_work(
                env, branch=started.branch, head=head, since=started.since, out=bundle
            ):
                record = record.model_copy(update={"bundle": store(started.name, BUNDLE, bundle)})
            if started.push and record.commits:
                given = None
                if started.credentials:
                    given = hydration.credentials_of(started.name, credentials_root)
                result = work_push.push_work(
                    env,
                    url=started.url,
                    credentials=given,
                    base=started.since,
                    head=head,
                    branch=started.branch,
                    home=scratch,
                )
                failure = result.failure
                record = record.model_copy(
                    update={
                        "pushed": failure is None,
                        "push_fault": failure.fault.value if failure else None,
                        "push_error": failure.message if failure else None,
                        "workflow_changes_quarantined": result.workflow_changes_quarantined,
                    }
                )
    return record


def hand_off(
    checkouts_file: Path,
    *,
    workspace: Path,
    scratch: Path,
    credentials_root: Path,
    limits: WorkLimits,
    store: StoreFile,
) -> list[CheckoutRecord]:
    """Every checked-out repository's record, its bundle stored and its push made."""
    records = []
    for index, started in enumerate(hydration.read_started(checkouts_file)):
        directory = scratch / f"checkout-{index}"
        directory.mkdir(mode=0o700)
        try:
            record = _one(
                started,
                workspace=workspace,
                scratch=directory,
                credentials_root=credentials_root,
                limits=limits,
                store=store,
            )
        except (
            BadRepository,
            git_repos.RepositoryProblem,
            git_repos.GitFailed,
            git_checkout.GitFailed,
        ) as problem:
            logger.warning("repository %s: %s", started.name, problem)
            record = _record(started).model_copy(update={"skipped": str(problem)})
        logger.info("repository %s: %s", started.name, record.model_dump_json(exclude_none=True))
        records.append(record)
    return records
