"""R63: which repositories a phase checks out, on which work branch, from which commit.

A phase checks out the Execution's repositories, or the ones it names, each at
``/workspace/<name>`` on its work branch: ``push.branch``, else ``agentjobs/<execution>``.
The first phase to check a repository out starts from ``ref`` (the remote's HEAD without
one); every later phase starts from the commit the previous phase that checked it out ended
on, so work moves from phase to phase whether or not it is pushed.

Decisions where the issue is silent:

- A phase that does not name a repository leaves its work alone: the next phase that does
  starts from the last commit any phase recorded for it, not from ``ref``.
- A resumed Execution's work branch is its own (``agentjobs/<resumed execution>``): its
  first phase starts from the commit its parent's last completed phase recorded, so the
  parent's branch is never pushed to by two Executions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentjobs.models.repositories import Repository, RepositoryStatus

BRANCH_PREFIX = "agentjobs/"


@dataclass(frozen=True)
class Checkout:
    """One repository as a phase's checkout step gets it."""

    name: str
    url: str
    ref: str | None  # what to fetch when nothing was handed on
    depth: int | None
    branch: str  # the work branch the agent finds checked out
    handed_commit: str | None  # the commit an earlier phase ended on: the phase starts there
    push: bool
    credentials_secret: str | None
    agent_credentials: bool


def work_branch(repository: Repository, execution_name: str) -> str:
    """The branch a phase's work goes on (and is pushed to, when pushing is on)."""
    if repository.push is not None and repository.push.branch is not None:
        return repository.push.branch
    return f"{BRANCH_PREFIX}{execution_name}"


def checkouts(
    repositories: Sequence[Repository],
    names: Sequence[str] | None,
    *,
    execution_name: str,
    earlier: Sequence[Sequence[RepositoryStatus]],
) -> list[Checkout]:
    """A phase's checkouts, in the Execution's order. ``names``: the phase's narrowing (None:
    every repository); ``earlier``: the repositories statuses of the phases before it, in
    order (a resumed Execution's inherited phases first)."""
    handed: dict[str, str] = {}
    for statuses in earlier:
        for status in statuses:
            if status.head_commit is not None:
                handed[status.name] = status.head_commit
    chosen = [r for r in repositories if names is None or r.name in names]
    return [
        Checkout(
            name=r.name,
            url=r.url,
            ref=r.ref,
            depth=r.depth,
            branch=work_branch(r, execution_name),
            handed_commit=handed.get(r.name),
            push=r.push is not None,
            credentials_secret=r.credentials_secret.name if r.credentials_secret else None,
            agent_credentials=r.agent_credentials,
        )
        for r in chosen
    ]
