"""Pushing a phase's work branch at the end of an attempt (issue 25, R62, R64).

A network fault is tried again after a backoff, a few times; a refusal because the commits
change workflows is answered once, by pushing the same commits without those changes (the
workflow patch R52 stores holds what was left out); any other refusal is final, in the
server's words.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from agentjobs.adapters import git_push
from agentjobs.adapters.git_checkout import GitCredentials
from agentjobs.adapters.git_quarantine import CannotQuarantine, without_workflow_changes
from agentjobs.contract.repositories.git_errors import GitFailure, GitFault, classify
from agentjobs.contract.repositories.status import PushResult
from agentjobs.runtime import backoff

NETWORK_TRIES = 4


def _pushed(
    repository: Mapping[str, str],
    commit: str,
    *,
    url: str,
    credentials: GitCredentials | None,
    branch: str,
    home: Path,
    sleep: Callable[[float], None],
) -> GitFailure | None:
    def attempt() -> GitFailure | None:
        said = git_push.push(
            repository, url=url, credentials=credentials, commit=commit, branch=branch, home=home
        )
        return None if said is None else classify(said)

    delays = backoff.STORAGE.delays()
    for _ in range(NETWORK_TRIES - 1):
        failure = attempt()
        if failure is None or not failure.retryable:
            return failure
        sleep(next(delays))
    return attempt()


def push_work(
    repository: Mapping[str, str],
    *,
    url: str,
    credentials: GitCredentials | None,
    base: str,
    head: str,
    branch: str,
    home: Path,
    sleep: Callable[[float], None] = time.sleep,
) -> PushResult:
    """``head`` pushed to ``branch``; ``base`` is where the phase started (the workflows it
    had are kept when workflow changes must be left out)."""

    def pushed(commit: str) -> GitFailure | None:
        return _pushed(
            repository,
            commit,
            url=url,
            credentials=credentials,
            branch=branch,
            home=home,
            sleep=sleep,
        )

    failure = pushed(head)
    if failure is None or failure.fault is not GitFault.WORKFLOW:
        return PushResult(failure)
    try:
        rewritten = without_workflow_changes(repository, base, head)
    except CannotQuarantine:
        return PushResult(failure)
    again = pushed(rewritten)
    return PushResult(again, workflow_changes_quarantined=again is None)
