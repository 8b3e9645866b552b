"""The repositories API (issue 25), enforced by the real API server.

Cases: a repository named twice or named artifacts, a URL with another scheme, a user or
password, no repository path, a query, or a space, a ref or push branch git would not take,
a phase that names a repository the Execution does not list, and an unknown field are each
refused with their own message, and nothing is created; https and http URLs, refs, depth,
credentials and push are stored as written; repositories cannot be changed once the
Execution exists; ``status.repositories[]`` is accepted whole.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from devcluster.testing import Kubectl

URL = "https://git.example.com/team/service.git"


def execution(
    name: str, repositories: list[dict[str, Any]] | None, phase: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "defaults": {"image": "busybox:1.36"},
        "phases": [{"name": "fix", "prompt": "Fix the failing test.", **(phase or {})}],
    }
    if repositories is not None:
        spec["repositories"] = repositories
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": spec,
    }


def repository(name: str = "service", url: str = URL, **extra: Any) -> dict[str, Any]:
    return {"name": name, "url": url, **extra}


def apply(kubectl: Kubectl, namespace: str, manifest: Any) -> Any:
    return kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(manifest), check=False)


@pytest.mark.parametrize(
    ("repositories", "phase", "message"),
    [
        ([repository(), repository()], {}, "repository names must be unique"),
        ([repository("artifacts")], {}, "a repository cannot be named artifacts"),
        ([repository("Service")], {}, "a repository's name must be a DNS label"),
        ([repository(url="ssh://git.example.com/s.git")], {}, "url must start with https://"),
        ([repository(url="https://x:tok@git.example.com/s.git")], {}, "no user or password"),
        ([repository(url="https://git.example.com")], {}, "url must name a host and a"),
        ([repository(url=URL + "?ref=main")], {}, "url must not have a ?query"),
        ([repository(url=URL + " x")], {}, "url must not contain spaces"),
        ([repository(ref="main..dev")], {}, "must be a git branch, tag or commit"),
        ([repository(ref="-upload-pack=x")], {}, "must be a git branch, tag or commit"),
        ([repository(push={"branch": "work.lock"})], {}, "must be a git branch, tag or commit"),
        ([repository(depth=0)], {}, "should be greater than or equal to 1"),
        ([repository(token="t")], {}, 'unknown field "spec.repositories[0].token"'),
        ([repository()], {"repositories": ["docs"]}, "only name repositories listed"),
        (None, {"repositories": ["service"]}, "only name repositories listed"),
    ],
    ids=[
        "twice",
        "artifacts",
        "upper-case",
        "ssh",
        "credentials-in-url",
        "no-path",
        "query",
        "space",
        "dot-dot-ref",
        "option-ref",
        "lock-branch",
        "depth-zero",
        "unknown-field",
        "unlisted-name",
        "no-repositories",
    ],
)
def test_a_wrong_repository_is_refused_with_a_message_that_says_what_to_fix(
    kubectl: Kubectl,
    namespace: str,
    crds: None,
    repositories: list[dict[str, Any]] | None,
    phase: dict[str, Any],
    message: str,
) -> None:
    result = apply(kubectl, namespace, execution("wrong", repositories, phase))
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert kubectl.json("get", "executions", "-n", namespace)["items"] == []


def test_repositories_are_stored_as_written(kubectl: Kubectl, namespace: str, crds: None) -> None:
    repositories = [
        repository(
            ref="release/1.2",
            depth=1,
            credentialsSecret={"name": "git-token"},
            push={"branch": "agentjobs/fix-parser"},
        ),
        repository("docs", "http://git.tools.svc:3000/team/docs.git", agentCredentials=True),
    ]
    result = apply(
        kubectl, namespace, execution("valid", repositories, {"repositories": ["service"]})
    )
    assert result.returncode == 0, result.stderr
    stored = kubectl.json("get", "execution", "valid", "-n", namespace)["spec"]
    assert stored["repositories"] == repositories
    assert stored["phases"][0]["repositories"] == ["service"]


@pytest.mark.parametrize(
    "change",
    [
        {"spec": {"repositories": [repository(ref="dev")]}},
        {"spec": {"repositories": None}},
    ],
    ids=["changed", "removed"],
)
def test_repositories_cannot_be_changed_once_the_execution_exists(
    kubectl: Kubectl, namespace: str, crds: None, change: dict[str, Any]
) -> None:
    assert apply(kubectl, namespace, execution("fixed", [repository()])).returncode == 0
    result = kubectl.run(
        "patch",
        "execution",
        "fixed",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps(change),
        check=False,
    )
    assert result.returncode != 0
    assert "repositories cannot be changed once the execution exists" in result.stderr
    stored = kubectl.json("get", "execution", "fixed", "-n", namespace)
    assert stored["spec"]["repositories"] == [repository()]


def test_the_status_entries_are_accepted_whole(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("done", [repository()])).returncode == 0
    entries = [
        {
            "name": "service",
            "url": URL,
            "baseRef": "main",
            "baseCommit": "a" * 40,
            "branch": "agentjobs/done",
            "headCommit": "b" * 40,
            "commits": 1,
            "pushed": False,
            "pushError": "GH006: Protected branch update failed for refs/heads/agentjobs/done.",
            "workflowChangesQuarantined": False,
            "uncommittedChanges": True,
        }
    ]
    body = json.dumps({"status": {"status": "completed", "repositories": entries}})
    result = kubectl.run(
        "patch",
        "execution",
        "done",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        body,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    stored = kubectl.json("get", "execution", "done", "-n", namespace)["status"]
    assert stored["repositories"] == entries
