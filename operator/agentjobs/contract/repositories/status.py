"""What a phase's and an Execution's status say of each repository (R66).

A phase's entry puts together where its checkout started, where its work branch ended and
what became of the push, as the harvester's last sync recorded them; an Execution's lists
each repository once, as the last phase that checked it out left it (a resumed Execution's
inherited phases count before its own).

Decisions where the issue is silent:

- A phase whose harvester recorded nothing for a repository (its pod never ran, or its last
  sync was lost) passes on what it was handed: the next phase starts where this one did,
  never from an older commit.
- A push fault the harvester names that this operator does not know is read as ``other``.
- The harvester's record is written inside the agent's pod, so it is read as untrusted: a
  record whose commits are not object ids is as none, and its words are cleaned and cut
  before they reach a status.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentjobs.contract.repositories.git_errors import GitFailure, GitFault
from agentjobs.contract.repositories.push import UnpushedWork
from agentjobs.contract.text import agent_text
from agentjobs.models.repositories import PhaseRepository, RepositoryStatus
from agentjobs.models.storage import CheckoutRecord

_OBJECT_ID = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class PushResult:
    """A push of the work branch: None failure when it landed."""

    failure: GitFailure | None
    workflow_changes_quarantined: bool = False


def _commits_named(record: CheckoutRecord) -> bool:
    commits = (record.head, record.base_commit, record.since)
    return all(c is not None and _OBJECT_ID.fullmatch(c) for c in commits)


def _words(text: str) -> str:
    return agent_text.cut(agent_text.clean(text), agent_text.SHORT_TEXT_BYTES)


def phase_entry(
    checkout: PhaseRepository, record: CheckoutRecord | None, *, bundle_url: str | None
) -> RepositoryStatus:
    """One repository's entry in a phase's status; ``bundle_url`` where the record's bundle
    is stored."""
    handed = checkout.handed
    entry = RepositoryStatus(name=checkout.name, url=checkout.url, branch=checkout.branch)
    if record is None or not _commits_named(record):
        if handed is None:
            return entry
        return entry.model_copy(
            update={
                "head_commit": handed.commit,
                "bundle": handed.bundle,
                "bundle_sha256": handed.bundle_sha256,
                "bundle_base": handed.since,
            }
        )
    return entry.model_copy(
        update={
            "base_ref": _words(record.base_ref),
            "base_commit": record.base_commit,
            "head_commit": record.head,
            "commits": record.commits,
            "pushed": record.pushed,
            "push_error": _words(record.push_error) if record.push_error else None,
            "workflow_changes_quarantined": record.workflow_changes_quarantined,
            "uncommitted_changes": record.uncommitted_changes,
            "bundle": bundle_url if record.bundle is not None else None,
            "bundle_sha256": record.bundle.sha256 if record.bundle is not None else None,
            "bundle_base": record.since,
        }
    )


def unpushed(checkout: PhaseRepository, record: CheckoutRecord | None) -> UnpushedWork | None:
    """R64: the repository's push, when one was made and did not land."""
    if record is None or record.pushed is not False:
        return None
    try:
        fault = GitFault(record.push_fault or GitFault.OTHER)
    except ValueError:
        fault = GitFault.OTHER
    message = _words(record.push_error or "the push did not land")
    return UnpushedWork(checkout.name, checkout.branch, GitFailure(fault, message))


def phase_repositories(
    checkouts: Sequence[PhaseRepository],
    records: Sequence[CheckoutRecord],
    bundle_url: Callable[[str], str],
) -> tuple[list[RepositoryStatus], list[UnpushedWork]]:
    """Each checkout's entry in the phase's status, and the pushes that did not land (R64).
    ``bundle_url`` gives where a repository's bundle is stored, by its name. A record of a
    repository the phase did not check out (the harvester runs in the agent's pod) is
    ignored."""
    by_name = {record.name: record for record in records}
    entries, unlanded = [], []
    for checkout in checkouts:
        record = by_name.get(checkout.name)
        entries.append(phase_entry(checkout, record, bundle_url=bundle_url(checkout.name)))
        if (work := unpushed(checkout, record)) is not None:
            unlanded.append(work)
    return entries, unlanded


def latest(phases: Sequence[Sequence[RepositoryStatus] | None]) -> list[RepositoryStatus] | None:
    """Each repository once, as the last phase (in order) that recorded it left it; None when
    no phase recorded any, so an Execution without repositories shows nothing."""
    found: dict[str, RepositoryStatus] = {}
    for entries in phases:
        for entry in entries or []:
            found.pop(entry.name, None)
            found[entry.name] = entry
    return list(found.values()) or None
