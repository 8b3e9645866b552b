"""R63 in the fetcher: each repository checked out at ``/workspace/<name>`` before the agent.

For each of the Phase's repositories: the credentials are read from the files mounted into
this container only, a handed bundle (the previous phase's work) is downloaded and checked
against its SHA-256, and the repository is checked out on its work branch
(:mod:`agentjobs.adapters.git_checkout`). A network fault is tried again after a backoff;
anything else git says ends the checkout at once, in the server's words (R62), so the agent
never runs on a workspace it was not meant to have. Where each repository started is written
to a file only our containers mount, for the harvester's hand-off and push.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjobs.adapters.git_checkout import (
    CheckedOut,
    GitCredentials,
    GitFailed,
    Handed,
    NotEmpty,
    check_out,
    git_diff,
)
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.contract.repositories.git_errors import GitFailure, GitFault, classify
from agentjobs.kube import pod_placement
from agentjobs.models.repositories import HandedWork, PhaseRepository
from agentjobs.models.storage import ObjectLocation
from agentjobs.runtime import backoff

logger = logging.getLogger("agentjobs.fetcher")
NETWORK_TRIES = 4
TOKEN_FILE = "token"
USERNAME_FILE = "username"


class CheckoutFailed(Exception):
    """A repository that could not be checked out, and what git (or the server) said."""

    def __init__(self, repository: str, failure: GitFailure) -> None:
        super().__init__(f"could not check out {repository}: {failure.message}")
        self.repository = repository
        self.failure = failure


@dataclass(frozen=True)
class Started:
    """Where a repository's checkout started, as the harvester needs it."""

    name: str
    url: str
    branch: str
    base_ref: str
    base_commit: str
    since: str  # the remote's commit the work builds on
    push: bool
    credentials: bool

    def to_json(self) -> dict[str, object]:
        return self.__dict__.copy()


def read_started(path: Path) -> list[Started]:
    """What the checkout wrote (nothing when the phase checks nothing out)."""
    if not path.exists():
        return []
    return [Started(**item) for item in json.loads(path.read_text())]


def credentials(repository: PhaseRepository, root: Path) -> GitCredentials | None:
    """The repository's credentials from its mounted Secret (None: the repository is public)."""
    if repository.credentials_secret is None:
        return None
    return credentials_of(repository.name, root)


def credentials_of(name: str, root: Path) -> GitCredentials:
    """The credentials mounted for repository ``name``: ``token``, and ``username`` if set."""
    directory = root / name
    token = (directory / TOKEN_FILE).read_text().strip()
    username = directory / USERNAME_FILE
    if username.exists() and (name := username.read_text().strip()):
        return GitCredentials(token, name)
    return GitCredentials(token)


def _emptied(target: Path) -> None:
    """Clear what a failed try left, so the next one starts from an empty directory."""
    for entry in target.iterdir() if target.exists() else ():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _with_retries(
    repository: PhaseRepository,
    attempt: Callable[[], CheckedOut],
    target: Path,
    sleep: Callable[[float], None],
) -> CheckedOut:
    delays = backoff.STORAGE.delays()
    for tried in range(1, NETWORK_TRIES + 1):
        try:
            return attempt()
        except NotEmpty as error:
            raise CheckoutFailed(repository.name, GitFailure(GitFault.OTHER, str(error))) from None
        except GitFailed as error:
            failure = classify(error.stderr)
            if not failure.retryable or tried == NETWORK_TRIES:
                raise CheckoutFailed(repository.name, failure) from None
            delay = next(delays)
            logger.warning(
                "checkout of %s: %s; retrying in %.1f s", repository.name, failure, delay
            )
            sleep(delay)
            _emptied(target)
    raise AssertionError("unreachable")


FetchBundle = Callable[[HandedWork, Path], None]


def bundle_fetcher(store: PresignedStore) -> FetchBundle:
    """Handed bundles downloaded from storage, refused unless they hash to their SHA-256."""

    def fetch(handed: HandedWork, target: Path) -> None:
        assert handed.bundle is not None
        location = ObjectLocation.parse(handed.bundle)
        # Not waited out: a bundle that is gone (404) would hold the pod for ever; a failed
        # checkout is a platform failure, which R45 retries.
        store.download(location, target, sha256=handed.bundle_sha256 or "")

    return fetch


def _handed(
    fetch_bundle: FetchBundle | None, repository: PhaseRepository, scratch: Path
) -> Handed | None:
    handed = repository.handed
    if handed is None:
        return None
    bundle = None
    if handed.bundle is not None:
        assert fetch_bundle is not None, "a bundle to fetch but no storage configured"
        bundle = scratch / f"{repository.name}.bundle"
        fetch_bundle(handed, bundle)
    return Handed(commit=handed.commit, since=handed.since, bundle=bundle)


def _write_changes(
    target: Path, repository: PhaseRepository, done: CheckedOut, changes: Path
) -> None:
    """The graded attempt's changes, from ``diff_from`` to the checked-out commit."""
    assert repository.diff_from is not None
    changes.mkdir(parents=True, exist_ok=True)
    try:
        diff = git_diff(target, repository.diff_from, done.base_commit)
    except GitFailed as error:
        raise CheckoutFailed(repository.name, classify(error.stderr)) from None
    (changes / f"{repository.name}.diff").write_bytes(diff)


def hydrate(
    fetch_bundle: FetchBundle | None,
    repositories: Sequence[PhaseRepository],
    *,
    workspace: Path,
    credentials_root: Path,
    started_file: Path,
    scratch: Path,
    changes: Path | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Started]:
    """Every repository checked out; raises CheckoutFailed at the first that cannot be.
    ``changes``: where a grader's diffs of the graded work go (``diff_from``)."""
    # Group-writable files: the agent may run as another user of the pod's group.
    os.umask(0o002)
    started = []
    for repository in repositories:
        target = workspace / repository.name
        target.mkdir(exist_ok=True)
        os.chmod(target, pod_placement.SHARED_DIRECTORY_MODE)
        handed = _handed(fetch_bundle, repository, scratch)
        given = credentials(repository, credentials_root)

        def attempt(
            repository: PhaseRepository = repository,
            target: Path = target,
            given: GitCredentials | None = given,
            handed: Handed | None = handed,
        ) -> CheckedOut:
            return check_out(
                url=repository.url,
                ref=repository.ref,
                depth=repository.depth,
                branch=repository.branch,
                target=target,
                credentials=given,
                home=scratch,
                handed=handed,
            )

        done = _with_retries(repository, attempt, target, sleep)
        if repository.diff_from is not None and changes is not None:
            _write_changes(target, repository, done, changes)
        logger.info("checked out %s at %s on %s", repository.name, done.base_commit, done.branch)
        started.append(
            Started(
                name=repository.name,
                url=repository.url,
                branch=done.branch,
                base_ref=done.base_ref,
                base_commit=done.base_commit,
                since=handed.since if handed is not None else done.base_commit,
                push=repository.push,
                credentials=given is not None,
            )
        )
    started_file.parent.mkdir(parents=True, exist_ok=True)
    started_file.write_text(json.dumps([item.to_json() for item in started]))
    return started
