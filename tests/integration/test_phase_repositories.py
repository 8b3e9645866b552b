"""A repository through two phases in the sidecars' own code (sidecars/hydration.py and
sidecars/work_handoff.py), against the real git server, without a cluster.

Cases: the first phase's checkout starts the work branch from the remote's HEAD and records
where it started; the harvester's hand-off bundles the agent's commit, pushes it and records
head, commits and pushed; the second phase starts from that commit, from the bundle alone
(pushing off in between), and its own commit is pushed on top; a token is read only from the
credentials directory and never left in the repository; a wrong token, a missing ref and an
unreachable server fail the checkout with R62's fault and the server's words, the last after
four tries; a refused push is recorded with its fault and words, and nothing is forced.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.contract.artifacts.unpushed_work import DEFAULT_LIMITS
from agentjobs.contract.repositories import status as repository_status
from agentjobs.contract.repositories.git_errors import GitFault
from agentjobs.models.repositories import HandedWork, PhaseRepository
from agentjobs.models.storage import CheckoutRecord, StoredPatch
from agentjobs.sidecars import hydration, work_handoff
from devcluster.git_server import GitServer, Token

TOKEN = Token("phase-token-0123456789")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    with GitServer(tmp_path / "server", tokens=[TOKEN], protected=["main"]) as served:
        served.create("service", {"src/app.py": "print(1)\n"})
        yield served


def git(directory: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=agent", "-c", "user.email=a@example.test",
         *arguments],
        capture_output=True, text=True, check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"},
    )  # fmt: skip
    return done.stdout.strip()


class Pod:
    """One phase's workspace, credentials, checkouts file and stored objects, on disk."""

    def __init__(self, root: Path, token: str = TOKEN.value) -> None:
        self.workspace = root / "workspace"
        self.credentials = root / "credentials"
        self.checkouts = root / "checkouts" / "checkouts.json"
        self.stored = root / "stored"
        for directory in (self.workspace, self.credentials / "service", self.stored):
            directory.mkdir(parents=True)
        (self.credentials / "service" / "token").write_text(token + "\n")
        self.root = root

    def store(self, repository: str, name: str, path: Path) -> StoredPatch:
        target = self.stored / repository / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        return StoredPatch(size=target.stat().st_size, sha256="0" * 64)

    def hydrate(
        self, repository: PhaseRepository, changes: Path | None = None
    ) -> list[hydration.Started]:
        def fetch(handed: HandedWork, target: Path) -> None:
            assert handed.bundle is not None
            shutil.copyfile(handed.bundle, target)

        scratch = self.root / "scratch"
        scratch.mkdir(exist_ok=True)
        return hydration.hydrate(
            fetch, [repository], workspace=self.workspace, credentials_root=self.credentials,
            started_file=self.checkouts, scratch=scratch, changes=changes,
            sleep=lambda _: None,
        )  # fmt: skip

    def hand_off(self) -> list[CheckoutRecord]:
        scratch = self.root / "harvester"
        scratch.mkdir()
        return work_handoff.hand_off(
            self.checkouts, workspace=self.workspace, scratch=scratch,
            credentials_root=self.credentials, limits=DEFAULT_LIMITS, store=self.store,
        )  # fmt: skip

    def commit(self, path: str, text: str, message: str) -> str:
        repository = self.workspace / "service"
        (repository / path).parent.mkdir(parents=True, exist_ok=True)
        (repository / path).write_text(text)
        git(repository, "add", "-A")
        git(repository, "commit", "-q", "-m", message)
        return git(repository, "rev-parse", "HEAD")


def repository(server: GitServer, **fields: object) -> PhaseRepository:
    values: dict[str, object] = {
        "name": "service", "url": server.url("service"), "branch": "agentjobs/fix-1",
        "push": True, "credentials_secret": "git",
    }  # fmt: skip
    return PhaseRepository.model_validate(values | fields)


def test_two_phases_hand_the_work_on_and_push_it(server: GitServer, tmp_path: Path) -> None:
    served = server.root / "service.git"
    base = git(served, "rev-parse", "main")
    first = Pod(tmp_path / "first")
    [started] = first.hydrate(repository(server, push=False))
    assert (started.base_commit, started.since, started.branch) == (base, base, "agentjobs/fix-1")
    checkout = first.workspace / "service"
    assert git(checkout, "symbolic-ref", "--short", "HEAD") == "agentjobs/fix-1"
    assert TOKEN.value not in (checkout / ".git" / "config").read_text()
    one = first.commit("src/app.py", "print(2)\n", "Phase one")

    [record] = first.hand_off()
    assert (record.head, record.commits, record.pushed, record.bundle is not None) == (
        one, 1, None, True
    )  # fmt: skip
    status = repository_status.phase_entry(
        repository(server, push=False), record,
        bundle_url=str(first.stored / "service" / work_handoff.BUNDLE),
    )  # fmt: skip
    handed = HandedWork(commit=one, since=base, bundle=status.bundle, bundle_sha256="0" * 64)

    second = Pod(tmp_path / "second")
    [started] = second.hydrate(repository(server, handed=handed))
    assert (started.base_commit, started.since) == (one, base)
    assert git(second.workspace / "service", "rev-parse", "HEAD") == one
    two = second.commit("NOTES.md", "two\n", "Phase two")
    [record] = second.hand_off()
    assert (record.head, record.commits, record.pushed, record.push_error) == (two, 2, True, None)
    assert server.commits("service", "agentjobs/fix-1")[:2] == ["Phase two", "Phase one"]
    assert git(served, "rev-parse", "agentjobs/fix-1") == two


def test_a_refused_push_is_recorded_and_nothing_is_forced(
    server: GitServer, tmp_path: Path
) -> None:
    pod = Pod(tmp_path / "pod")
    pod.hydrate(repository(server, branch="main"))
    pod.commit("src/app.py", "print(3)\n", "On the protected branch")
    [record] = pod.hand_off()
    assert (record.pushed, record.push_fault) == (False, GitFault.PERMISSION.value)
    assert record.push_error == "error: GH006: Protected branch update failed for refs/heads/main."
    assert server.commits("service", "main") == ["The repository's first commit"]


@pytest.mark.parametrize(
    ("fields", "token", "fault", "words"),
    [
        ({}, "wrong-token", GitFault.AUTH, "could not read Username"),
        ({"ref": "no-such-branch"}, TOKEN.value, GitFault.NOT_FOUND, "no-such-branch"),
        ({"url": "http://127.0.0.1:9/service.git"}, TOKEN.value, GitFault.NETWORK, "127.0.0.1"),
    ],
    ids=["wrong token", "missing ref", "unreachable"],
)
def test_a_checkout_that_cannot_be_made_says_why(
    server: GitServer,
    tmp_path: Path,
    fields: dict[str, object],
    token: str,
    fault: GitFault,
    words: str,
) -> None:
    pod = Pod(tmp_path / "pod", token=token)
    with pytest.raises(hydration.CheckoutFailed) as failed:
        pod.hydrate(repository(server, **fields))
    assert failed.value.failure.fault is fault
    assert words in failed.value.failure.message
    assert not pod.checkouts.exists()


def test_a_workflow_change_is_pushed_without_it_when_the_token_lacks_the_grant(
    server: GitServer, tmp_path: Path
) -> None:
    pod = Pod(tmp_path / "pod")
    pod.hydrate(repository(server))
    pod.commit(".github/workflows/ci.yml", "on: push\n", "Run CI")
    pod.commit("src/app.py", "print(4)\n", "Change the app")
    [record] = pod.hand_off()
    assert (record.pushed, record.workflow_changes_quarantined) == (True, True), record
    assert server.changed_paths("service", "agentjobs/fix-1") == {"src/app.py"}


def test_uncommitted_changes_are_stored_as_a_patch_and_never_committed(
    server: GitServer, tmp_path: Path
) -> None:
    pod = Pod(tmp_path / "pod")
    pod.hydrate(repository(server, push=False))
    work = pod.workspace / "service"
    head = pod.commit("src/app.py", "print(5)\n", "Committed")
    (work / "src/app.py").write_text("print(6)\n")
    (work / "NEW.md").write_text("new\n")
    (work / ".gitignore").write_text("build/\n")
    (work / "build").mkdir()
    (work / "build/out.bin").write_bytes(b"\0" * 10)
    (work / "token-link").symlink_to(pod.credentials / "service" / "token")
    [record] = pod.hand_off()
    assert (record.head, record.commits, record.uncommitted_changes) == (head, 1, True)
    patch = (pod.stored / "service" / work_handoff.UNCOMMITTED).read_text()
    assert "+print(6)" in patch and "+++ b/NEW.md" in patch and "build/out.bin" not in patch
    assert TOKEN.value not in patch  # a link is kept as a link, never followed
    assert git(work, "rev-parse", "HEAD") == head
    replay = tmp_path / "replay"
    subprocess.run(["git", "clone", "-q", str(work), str(replay)], check=True, env=os.environ)
    (tmp_path / "u.patch").write_text(patch)
    git(replay, "apply", str(tmp_path / "u.patch"))
    assert (replay / "src/app.py").read_text() == "print(6)\n"


def test_a_clean_work_tree_has_no_uncommitted_patch(server: GitServer, tmp_path: Path) -> None:
    pod = Pod(tmp_path / "pod")
    pod.hydrate(repository(server, push=False))
    [record] = pod.hand_off()
    assert (record.uncommitted_changes, record.uncommitted_patch, record.commits) == (
        False, None, 0
    )  # fmt: skip


def test_a_grader_sees_the_graded_attempts_changes_as_a_diff(
    server: GitServer, tmp_path: Path
) -> None:
    base = git(server.root / "service.git", "rev-parse", "main")
    agent = Pod(tmp_path / "agent")
    agent.hydrate(repository(server, push=False))
    head = agent.commit("src/app.py", "print(7)\n", "Graded work")
    [record] = agent.hand_off()
    bundle = str(agent.stored / "service" / work_handoff.BUNDLE)
    handed = HandedWork(commit=head, since=base, bundle=bundle, bundle_sha256="0" * 64)
    grader = Pod(tmp_path / "grader")
    changes = grader.root / "changes"
    grader.hydrate(repository(server, push=False, handed=handed, diff_from=base), changes)
    diff = (changes / "service.diff").read_text()
    assert "-print(1)" in diff and "+print(7)" in diff
    assert git(grader.workspace / "service", "rev-parse", "HEAD") == head == record.head
