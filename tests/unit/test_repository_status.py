"""What the statuses say of each repository: a phase's entry and an Execution's latest.

Cases: a pushed phase's entry gives its base, head, commits and pushed true; a refused push
gives pushed false with the server's words; a quarantined push says so; pushing off gives
pushed null; an Execution lists each repository once as the last phase left it, in the order
they were last recorded, and nothing when no phase recorded one.
"""

from __future__ import annotations

from agentjobs.contract.repositories.checkout import Checkout
from agentjobs.contract.repositories.git_errors import GitFailure, GitFault
from agentjobs.contract.repositories.status import PushResult, latest, phase_entry
from agentjobs.models.repositories import RepositoryStatus

CHECKOUT = Checkout(
    name="service",
    url="https://git.example.com/team/service.git",
    ref="main",
    depth=None,
    branch="agentjobs/fix-1",
    handed_commit=None,
    push=True,
    credentials_secret="git",
    agent_credentials=False,
)
REFUSED = "error: GH006: Protected branch update failed for refs/heads/agentjobs/fix-1."


def entry(push: PushResult | None) -> RepositoryStatus:
    return phase_entry(
        CHECKOUT,
        base_ref="main",
        base_commit="a" * 40,
        head_commit="b" * 40,
        commits=2,
        uncommitted_changes=True,
        push=push,
    )


def test_a_pushed_phase_gives_its_base_head_and_commits() -> None:
    pushed = entry(PushResult(failure=None))
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
    )


def test_a_refused_push_gives_the_servers_words() -> None:
    refused = entry(PushResult(GitFailure(GitFault.PERMISSION, REFUSED)))
    assert (refused.pushed, refused.push_error) == (False, REFUSED)


def test_a_quarantined_push_says_so_and_pushing_off_gives_null() -> None:
    assert entry(PushResult(None, workflow_changes_quarantined=True)).workflow_changes_quarantined
    off = entry(None)
    assert (off.pushed, off.push_error, off.workflow_changes_quarantined) == (None, None, False)


def test_an_execution_lists_each_repository_as_the_last_phase_left_it() -> None:
    def status(name: str, head: str) -> RepositoryStatus:
        return RepositoryStatus(name=name, url=f"https://g/{name}.git", head_commit=head)

    shown = latest(
        [[status("service", "1"), status("docs", "2")], None, [status("service", "3")], []]
    )
    assert shown == [status("docs", "2"), status("service", "3")]
    assert latest([None, []]) is None
