"""R63: which repositories a phase checks out, on which work branch, from which commit.

A phase checks out the Execution's repositories, or the ones it names, each at
``/workspace/<name>`` on its work branch: ``push.branch``, else ``agentjobs/<execution>``.
The first phase to check a repository out starts from ``ref`` (the remote's HEAD without
one); every later phase starts from the commit the previous phase that checked it out ended
on, applying the bundle of that phase's commits, so work moves from phase to phase whether
or not it is pushed.

Decisions where the issue is silent:

- A phase that does not name a repository leaves its work alone: the next phase that does
  starts from the last commit any phase recorded for it, not from ``ref``.
- A resumed Execution's work branch is its own (``agentjobs/<resumed execution>``): its
  first phase starts from the commit its parent's last completed phase recorded, so the
  parent's branch is never pushed to by two Executions.
- A phase's later attempt (a retry, R45, or a revision, R42) starts where the attempt
  before it left each repository, not where the phase started: a revision revises that
  work, and a retry after an attempt that pushed would otherwise be refused as moved.
- ``http://`` sends the token in the clear: it is used only where one of the operator's
  ``--git-allow`` patterns matches the URL (loopback test servers); any other is refused
  before a pod is made, as a configuration blocker.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from agentjobs.models.repositories import (
    HandedWork,
    PhaseRepository,
    Repository,
    RepositoryStatus,
)

BRANCH_PREFIX = "agentjobs/"


def work_branch(repository: Repository, execution_name: str) -> str:
    """The branch a phase's work goes on (and is pushed to, when pushing is on)."""
    if repository.push is not None and repository.push.branch is not None:
        return repository.push.branch
    return f"{BRANCH_PREFIX}{execution_name}"


def handed_work(status: RepositoryStatus) -> HandedWork | None:
    """Where a phase's recorded work lets the next one start, if it recorded any."""
    if status.head_commit is None:
        return None
    since = status.bundle_base or status.head_commit
    return HandedWork(
        commit=status.head_commit,
        since=since,
        bundle=status.bundle,
        bundle_sha256=status.bundle_sha256,
    )


def checkouts(
    repositories: Sequence[Repository],
    names: Sequence[str] | None,
    *,
    execution_name: str,
    earlier: Sequence[Sequence[RepositoryStatus]],
) -> list[PhaseRepository]:
    """A phase's checkouts, in the Execution's order. ``names``: the phase's narrowing (None:
    every repository); ``earlier``: the repositories statuses of the phases before it, in
    order (a resumed Execution's inherited phases first)."""
    handed: dict[str, HandedWork] = {}
    for statuses in earlier:
        for status in statuses:
            if (work := handed_work(status)) is not None:
                handed[status.name] = work
    chosen = [r for r in repositories if names is None or r.name in names]
    return [
        PhaseRepository(
            name=r.name,
            url=r.url,
            ref=r.ref,
            depth=r.depth,
            branch=work_branch(r, execution_name),
            handed=handed.get(r.name),
            push=r.push is not None,
            credentials_secret=r.credentials_secret.name if r.credentials_secret else None,
            agent_credentials=r.agent_credentials,
        )
        for r in chosen
    ]


def continued(
    checkouts: Sequence[PhaseRepository], previous: Sequence[RepositoryStatus]
) -> list[PhaseRepository]:
    """A later attempt's checkouts: each from where the attempt before left it, if that
    attempt recorded it."""
    by_name = {entry.name: entry for entry in previous}
    result = []
    for checkout in checkouts:
        entry = by_name.get(checkout.name)
        work = handed_work(entry) if entry is not None else None
        result.append(checkout if work is None else checkout.model_copy(update={"handed": work}))
    return result


def http_refusal(url: str, allowed: Sequence[str]) -> str | None:
    """Why the operator does not use ``url``, if it does not: plain http that no
    ``--git-allow`` pattern names."""
    if not url.startswith("http://"):
        return None
    if any(fnmatch.fnmatchcase(url, pattern) for pattern in allowed):
        return None
    return (
        f"{url} is plain http, which would send the credentials in the clear: use https, "
        "or ask the operator's admin to name it with --git-allow"
    )
