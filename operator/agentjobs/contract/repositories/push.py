"""R64: what a push that did not land does to a phase's outcome.

The work exists and is stored (R52's patches, the hand-off's bundle) whether or not the push
landed, so the phase's status stands. Its ``taskOutcome`` says the push did not land, as R36a
says of a denied write: a success becomes ``partial_success``, any outcome gets one blocker
per repository in the server's words, and the user is asked to act when only they can.

Decisions where the issue is silent:

- The blocker's type is what the user would fix: ``permission`` for refused credentials, a
  protected branch or a workflow change that could not be quarantined; ``conflict`` when the
  remote branch moved on (nothing is forced); ``config`` when the repository is gone;
  ``transient`` for the network and anything git did not explain, the only ones that do not
  need the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentjobs.contract.repositories.git_errors import GitFailure, GitFault
from agentjobs.models.contract import Blocker, TaskOutcome, TaskOutcomeStatus

_BLOCKER_TYPES = {
    GitFault.AUTH: "permission",
    GitFault.PERMISSION: "permission",
    GitFault.WORKFLOW: "permission",
    GitFault.MOVED: "conflict",
    GitFault.NOT_FOUND: "config",
    GitFault.NETWORK: "transient",
    GitFault.OTHER: "transient",
}


@dataclass(frozen=True)
class UnpushedWork:
    """A repository whose work branch a push did not land on."""

    repository: str
    branch: str
    failure: GitFailure


def blocker(unpushed: UnpushedWork) -> Blocker:
    kind = _BLOCKER_TYPES[unpushed.failure.fault]
    return Blocker(
        type=kind,
        message=(
            f"the push of {unpushed.repository} to {unpushed.branch} did not land: "
            f"{unpushed.failure.message}"
        ),
        recoverable=True,
    )


def needs_user(unpushed: UnpushedWork) -> bool:
    return _BLOCKER_TYPES[unpushed.failure.fault] != "transient"


def after_pushes(outcome: TaskOutcome, unpushed: Sequence[UnpushedWork]) -> TaskOutcome:
    """``outcome`` once the pushes that did not land are told."""
    if not unpushed:
        return outcome
    status = (
        TaskOutcomeStatus.PARTIAL_SUCCESS
        if outcome.status is TaskOutcomeStatus.SUCCESS
        else outcome.status
    )
    return outcome.model_copy(
        update={
            "status": status,
            "blockers": [*outcome.blockers, *(blocker(u) for u in unpushed)],
            "needs_user_action": outcome.needs_user_action or any(map(needs_user, unpushed)),
        }
    )
