"""The repositories API (issue 25), as the operator reads what the API server admitted.

Cases: a repository defaults to the remote's HEAD, no push and no credentials for the agent;
an Execution without repositories has none and its phases narrow nothing; a phase names the
repositories it checks out; an unknown field is refused; the status entry round-trips in
camelCase; the CRD carries each rule's message (the real API server's refusals are in
tests/integration/test_repositories_validation.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from agentjobs.models.repositories import Repository, RepositoryStatus
from agentjobs.models.resources import ExecutionSpec

CRDS = Path(__file__).parents[2] / "crds"
REPOSITORY = {"name": "service", "url": "https://git.example.com/team/service.git"}


def test_a_repository_defaults_to_head_without_push_or_agent_credentials() -> None:
    repository = Repository.model_validate(REPOSITORY)
    assert (repository.ref, repository.depth, repository.push) == (None, None, None)
    assert repository.credentials_secret is None
    assert repository.agent_credentials is False


def test_an_execution_without_repositories_has_none() -> None:
    spec = ExecutionSpec.model_validate({"phases": [{"name": "a", "prompt": "p", "image": "i"}]})
    assert spec.repositories == []
    assert spec.phases[0].repositories is None


def test_a_phase_names_the_repositories_it_checks_out() -> None:
    spec = ExecutionSpec.model_validate(
        {
            "repositories": [
                {
                    **REPOSITORY,
                    "push": {"branch": "fix/parser"},
                    "credentialsSecret": {"name": "git"},
                }
            ],
            "phases": [{"name": "a", "prompt": "p", "image": "i", "repositories": ["service"]}],
        }
    )
    assert spec.phases[0].repositories == ["service"]
    assert spec.repositories[0].push is not None
    assert spec.repositories[0].push.branch == "fix/parser"


@pytest.mark.parametrize("changes", [{"token": "t"}, {"depth": 0}, {"push": {"force": True}}])
def test_an_unknown_field_or_a_depth_below_one_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        Repository.model_validate({**REPOSITORY, **changes})


def test_the_status_entry_round_trips_in_camel_case() -> None:
    wire = {
        "name": "service",
        "url": "https://git.example.com/team/service.git",
        "baseRef": "main",
        "baseCommit": "a" * 40,
        "branch": "agentjobs/fix",
        "headCommit": "b" * 40,
        "commits": 2,
        "pushed": False,
        "pushError": "GH006: Protected branch update failed",
        "workflowChangesQuarantined": True,
        "uncommittedChanges": False,
        "bundle": "s3://agentjobs/x/work/service/work.bundle",
        "bundleSha256": "c" * 64,
        "bundleBase": "a" * 40,
    }
    entry = RepositoryStatus.model_validate(wire)
    assert entry.model_dump(mode="json", by_alias=True) == wire


def test_the_crd_carries_every_rule_with_its_message() -> None:
    crd = yaml.safe_load((CRDS / "executions.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    repositories = spec["properties"]["repositories"]
    item = repositories["items"]["properties"]
    messages = [
        rule["message"]
        for schema in (repositories, item["name"], item["url"], item["ref"])
        for rule in schema["x-kubernetes-validations"]
    ]
    for expected in (
        "repository names must be unique",
        "cannot be named artifacts",
        "no user or password",
        "must be a git branch, tag or commit",
    ):
        assert any(expected in message for message in messages), expected
    spec_rules = [rule["message"] for rule in spec["x-kubernetes-validations"]]
    assert any("only name repositories listed" in message for message in spec_rules)
    assert any("repositories cannot be changed" in message for message in spec_rules)
