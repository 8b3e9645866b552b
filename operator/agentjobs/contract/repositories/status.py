"""What a phase's and an Execution's status say of each repository (issue 25).

A phase's entry puts together where its checkout started, where its work branch ended and
what became of the push; an Execution's lists each repository once, as the last phase that
checked it out left it (a resumed Execution's inherited phases count before its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentjobs.contract.repositories.checkout import Checkout
from agentjobs.contract.repositories.git_errors import GitFailure
from agentjobs.models.repositories import RepositoryStatus


@dataclass(frozen=True)
class PushResult:
    """A push of the work branch: None failure when it landed."""

    failure: GitFailure | None
    workflow_changes_quarantined: bool = False


def phase_entry(
    checkout: Checkout,
    *,
    base_ref: str,
    base_commit: str,
    head_commit: str,
    commits: int,
    uncommitted_changes: bool,
    push: PushResult | None,
) -> RepositoryStatus:
    """One repository's entry in a phase's status; ``push`` None when pushing is off."""
    return RepositoryStatus(
        name=checkout.name,
        url=checkout.url,
        base_ref=base_ref,
        base_commit=base_commit,
        branch=checkout.branch,
        head_commit=head_commit,
        commits=commits,
        pushed=None if push is None else push.failure is None,
        push_error=push.failure.message if push is not None and push.failure else None,
        workflow_changes_quarantined=bool(push and push.workflow_changes_quarantined),
        uncommitted_changes=uncommitted_changes,
    )


def latest(phases: Sequence[Sequence[RepositoryStatus] | None]) -> list[RepositoryStatus] | None:
    """Each repository once, as the last phase (in order) that recorded it left it; None when
    no phase recorded any, so an Execution without repositories shows nothing."""
    found: dict[str, RepositoryStatus] = {}
    for entries in phases:
        for entry in entries or []:
            found.pop(entry.name, None)
            found[entry.name] = entry
    return list(found.values()) or None
