"""R64: a push that did not land makes a success partial and says why, in the server's words.

Cases: no unpushed work leaves the outcome as it was; a refused push turns a success into
partial_success with a permission blocker and asks the user to act; a network failure is
transient and asks nothing of the user; a failed outcome stays failed and gains the blocker;
a moved branch is a conflict, a missing repository a config blocker; several repositories
give one blocker each, after the agent's own.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentjobs.contract.repositories.git_errors import GitFailure, GitFault
from agentjobs.contract.repositories.push import UnpushedWork, after_pushes
from agentjobs.models.contract import (
    Blocker,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)

NOW = datetime(2026, 12, 4, tzinfo=UTC)
PROTECTED = "error: GH006: Protected branch update failed for refs/heads/main."


def outcome(status: TaskOutcomeStatus = TaskOutcomeStatus.SUCCESS, **extra: object) -> TaskOutcome:
    return TaskOutcome(
        status=status,
        source=TaskOutcomeSource.AGENT,
        summary="Fixed the parser.",
        terminal_reason="finish_action",
        reported_at=NOW,
        **extra,  # type: ignore[arg-type]
    )


def unpushed(fault: GitFault, message: str = PROTECTED, name: str = "service") -> UnpushedWork:
    return UnpushedWork(name, "main", GitFailure(fault, message))


def test_nothing_unpushed_leaves_the_outcome_as_it_was() -> None:
    assert after_pushes(outcome(), []) == outcome()


def test_a_refused_push_makes_a_success_partial_and_asks_the_user() -> None:
    told = after_pushes(outcome(), [unpushed(GitFault.PERMISSION)])
    assert told.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert told.blockers == [
        Blocker(
            type="permission",
            message=f"the push of service to main did not land: {PROTECTED}",
            recoverable=True,
        )
    ]
    assert told.needs_user_action is True
    assert told.summary == "Fixed the parser."


def test_a_network_failure_is_transient_and_asks_nothing_of_the_user() -> None:
    told = after_pushes(outcome(), [unpushed(GitFault.NETWORK, "Connection refused")])
    assert told.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert [b.type for b in told.blockers] == ["transient"]
    assert told.needs_user_action is False


def test_a_failed_outcome_stays_failed_and_gains_the_blocker() -> None:
    told = after_pushes(outcome(TaskOutcomeStatus.FAILED), [unpushed(GitFault.AUTH)])
    assert told.status is TaskOutcomeStatus.FAILED
    assert [b.type for b in told.blockers] == ["permission"]


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (GitFault.MOVED, "conflict"),
        (GitFault.NOT_FOUND, "config"),
        (GitFault.WORKFLOW, "permission"),
        (GitFault.OTHER, "transient"),
    ],
)
def test_each_fault_gives_the_blocker_the_user_would_fix(fault: GitFault, kind: str) -> None:
    assert [b.type for b in after_pushes(outcome(), [unpushed(fault)]).blockers] == [kind]


def test_each_repository_gets_a_blocker_after_the_agents_own() -> None:
    own = Blocker(type="agent_note", message="flaky test skipped", recoverable=True)
    told = after_pushes(
        outcome(blockers=[own]),
        [unpushed(GitFault.NETWORK, name="service"), unpushed(GitFault.MOVED, name="docs")],
    )
    assert [b.type for b in told.blockers] == ["agent_note", "transient", "conflict"]
    assert told.needs_user_action is True
