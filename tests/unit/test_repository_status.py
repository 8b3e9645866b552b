"""What the statuses say of each repository: a phase's entry and an Execution's latest.

Cases: a pushed phase's entry gives its base, head, commits, bundle and pushed true; a
refused push gives pushed false with the server's words and is R64's unpushed work with the
recorded fault (an unknown one read as other); pushing off gives pushed null and no unpushed
work; a phase with no record passes on what it was handed, or nothing; an Execution lists
each repository once as the last phase left it, and nothing when no phase recorded one.
"""

from __future__ import annotations

from typing import Any

from agentjobs.contract.repositories.git_errors import GitFault
from agentjobs.contract.repositories.status import latest, phase_entry, unpushed
from agentjobs.models.repositories import HandedWork, PhaseRepository, RepositoryStatus
from agentjobs.models.storage import CheckoutRecord, StoredPatch

CHECKOUT = PhaseRepository(
    name="service",
    url="https://git.example.com/team/service.git",
    ref="main",
    branch="agentjobs/fix-1",
    push=True,
    credentials_secret="git",
)
REFUSED = "error: GH006: Protected branch update failed for refs/heads/agentjobs/fix-1."
BUNDLE = StoredPatch(size=10, sha256="c" * 64)


def record(**fields: Any) -> CheckoutRecord:
    base: dict[str, Any] = {
        "name": "service",
        "base_ref": "main",
        "base_commit": "a" * 40,
        "since": "a" * 40,
        "branch": "agentjobs/fix-1",
        "head": "b" * 40,
        "commits": 2,
        "bundle": BUNDLE,
        "uncommitted_changes": True,
    }
    return CheckoutRecord.model_validate(base | fields)


def test_a_pushed_phase_gives_its_base_head_commits_and_bundle() -> None:
    pushed = phase_entry(CHECKOUT, record(pushed=True), bundle_url="s3://b/w.bundle")
    assert pushed == RepositoryStatus(
        name="service",
        url="https://git.example.com/team/service.git",
        base_ref="main",
        base_commit="a" * 40,
        branch="agentjobs/fix-1",
        head_commit="b" * 40,
        commits=2,
        pushed=True,
        uncommitted_changes=True,
        bundle="s3://b/w.bundle",
        bundle_sha256="c" * 64,
        bundle_base="a" * 40,
    )
    assert unpushed(CHECKOUT, record(pushed=True)) is None


def test_a_refused_push_gives_the_servers_words_and_is_unpushed_work() -> None:
    refused = record(pushed=False, push_fault="permission", push_error=REFUSED)
    entry = phase_entry(CHECKOUT, refused, bundle_url="s3://b/w.bundle")
    assert (entry.pushed, entry.push_error) == (False, REFUSED)
    work = unpushed(CHECKOUT, refused)
    assert work is not None
    assert (work.repository, work.branch) == ("service", "agentjobs/fix-1")
    assert (work.failure.fault, work.failure.message) == (GitFault.PERMISSION, REFUSED)
    strange = unpushed(CHECKOUT, record(pushed=False, push_fault="gremlins"))
    assert strange is not None and strange.failure.fault is GitFault.OTHER


def test_a_quarantined_push_says_so_and_pushing_off_gives_null() -> None:
    quarantined = record(pushed=True, workflow_changes_quarantined=True)
    assert phase_entry(CHECKOUT, quarantined, bundle_url=None).workflow_changes_quarantined
    off = phase_entry(CHECKOUT, record(), bundle_url=None)
    assert (off.pushed, off.push_error, off.workflow_changes_quarantined) == (None, None, False)
    assert unpushed(CHECKOUT, record()) is None


def test_a_phase_without_a_record_passes_on_what_it_was_handed() -> None:
    handed = HandedWork(commit="d" * 40, since="a" * 40, bundle="s3://b/1", bundle_sha256="e" * 64)
    passed = phase_entry(CHECKOUT.model_copy(update={"handed": handed}), None, bundle_url=None)
    assert (passed.head_commit, passed.bundle, passed.bundle_base) == (
        "d" * 40,
        "s3://b/1",
        "a" * 40,
    )
    nothing = phase_entry(CHECKOUT, None, bundle_url=None)
    assert (nothing.head_commit, nothing.bundle, nothing.base_commit) == (None, None, None)


def test_an_execution_lists_each_repository_as_the_last_phase_left_it() -> None:
    def status(name: str, head: str) -> RepositoryStatus:
        return RepositoryStatus(name=name, url=f"https://g/{name}.git", head_commit=head)

    shown = latest(
        [[status("service", "1"), status("docs", "2")], None, [status("service", "3")], []]
    )
    assert shown == [status("docs", "2"), status("service", "3")]
    assert latest([None, []]) is None


def test_a_hostile_record_is_read_as_untrusted() -> None:
    forged = record(head="../../etc", pushed=True)
    assert phase_entry(CHECKOUT, forged, bundle_url="s3://b/w") == phase_entry(
        CHECKOUT, None, bundle_url=None
    )
    shouting = record(pushed=False, push_error="denied\x1b[2J\x00" + "x" * 5000)
    entry = phase_entry(CHECKOUT, shouting, bundle_url=None)
    assert entry.push_error is not None
    assert "\x1b" not in entry.push_error and "\x00" not in entry.push_error
    assert len(entry.push_error.encode()) <= 1024
    work = unpushed(CHECKOUT, shouting)
    assert work is not None and work.failure.message == entry.push_error
