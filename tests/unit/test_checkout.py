"""R63: which repositories a phase checks out, on which branch, from which commit.

Cases: the first phase starts every repository from its ref on agentjobs/<execution>, or on
push.branch; a phase that names repositories checks out only those, in the Execution's
order; a later phase starts from the last commit an earlier phase recorded, even across a
phase that skipped the repository; an earlier phase that recorded no commit hands nothing;
credentials and push are carried as the spec says.
"""

from __future__ import annotations

from typing import Any

from agentjobs.contract.repositories.checkout import (
    checkouts,
    continued,
    http_refusal,
    work_branch,
)
from agentjobs.models.repositories import Repository, RepositoryStatus

URL = "https://git.example.com/team/{}.git"


def repository(name: str, **extra: Any) -> Repository:
    return Repository.model_validate({"name": name, "url": URL.format(name), **extra})


def status(name: str, head: str | None) -> RepositoryStatus:
    return RepositoryStatus(name=name, url=URL.format(name), head_commit=head)


SERVICE = repository("service", ref="main", credentialsSecret={"name": "git"})
DOCS = repository("docs", push={"branch": "docs/notes"}, agentCredentials=True, depth=1)


def test_the_first_phase_starts_from_the_ref_on_the_work_branch() -> None:
    service, docs = checkouts([SERVICE, DOCS], None, execution_name="fix-1", earlier=[])
    assert (service.ref, service.branch, service.handed) == ("main", "agentjobs/fix-1", None)
    assert (service.push, service.credentials_secret, service.agent_credentials) == (
        False,
        "git",
        False,
    )
    assert (docs.ref, docs.branch, docs.depth) == (None, "docs/notes", 1)
    assert (docs.push, docs.credentials_secret, docs.agent_credentials) == (True, None, True)


def test_a_phase_checks_out_only_what_it_names_in_the_executions_order() -> None:
    chosen = checkouts([SERVICE, DOCS], ["docs", "service"], execution_name="e", earlier=[])
    assert [c.name for c in chosen] == ["service", "docs"]
    assert [
        c.name for c in checkouts([SERVICE, DOCS], ["docs"], execution_name="e", earlier=[])
    ] == ["docs"]


def test_a_later_phase_starts_from_the_last_commit_an_earlier_phase_recorded() -> None:
    earlier = [
        [status("service", "a" * 40), status("docs", "d" * 40)],
        [status("docs", "e" * 40)],  # the second phase named only docs
        [status("service", None)],  # a phase whose checkout recorded no commit hands nothing
    ]
    service, docs = checkouts([SERVICE, DOCS], None, execution_name="e", earlier=earlier)
    assert service.handed is not None and docs.handed is not None
    assert (service.handed.commit, service.handed.since) == ("a" * 40, "a" * 40)
    assert (docs.handed.commit, docs.handed.bundle) == ("e" * 40, None)


def test_a_later_phase_gets_the_bundle_of_the_work_since_the_remotes_commit() -> None:
    recorded = status("service", "b" * 40).model_copy(
        update={
            "bundle": "s3://b/k/work.bundle",
            "bundle_sha256": "f" * 64,
            "bundle_base": "a" * 40,
        }
    )
    (service,) = checkouts([SERVICE], None, execution_name="e", earlier=[[recorded]])
    assert service.handed is not None
    assert (service.handed.commit, service.handed.since) == ("b" * 40, "a" * 40)
    assert (service.handed.bundle, service.handed.bundle_sha256) == (
        "s3://b/k/work.bundle",
        "f" * 64,
    )


def test_plain_http_is_used_only_where_the_operator_allows_it() -> None:
    allowed = ["http://127.0.0.1:*/*", "http://10.0.0.*:8080/*"]
    assert http_refusal("https://git.example.com/a.git", []) is None
    assert http_refusal("http://127.0.0.1:9000/service.git", allowed) is None
    assert http_refusal("http://10.0.0.7:8080/x.git", allowed) is None
    refusal = http_refusal("http://git.example.com/a.git", allowed)
    assert refusal is not None and "--git-allow" in refusal
    assert http_refusal("http://127.0.0.1:9000/x.git", []) is not None


def test_the_work_branch_is_push_branch_or_named_after_the_execution() -> None:
    assert work_branch(SERVICE, "release-notes.v2") == "agentjobs/release-notes.v2"
    assert work_branch(DOCS, "release-notes") == "docs/notes"
    assert work_branch(repository("x", push={}), "e") == "agentjobs/e"


def test_a_later_attempt_starts_where_the_attempt_before_left_each_repository() -> None:
    (service, docs) = checkouts([SERVICE, DOCS], None, execution_name="e", earlier=[])
    left = status("service", "c" * 40).model_copy(update={"bundle_base": "a" * 40})
    again = continued([service, docs], [left, status("docs", None)])
    assert again[0].handed is not None
    assert (again[0].handed.commit, again[0].handed.since) == ("c" * 40, "a" * 40)
    assert again[1] == docs  # the attempt before recorded no commit for it
    assert continued([service], []) == [service]
