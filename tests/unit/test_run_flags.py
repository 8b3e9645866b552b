"""`agentjobs run`'s leader-election flags.

Cases: without --leader-election there is none; the Lease's namespace is the flag's, else
$POD_NAMESPACE, else the first --namespace, else `default`; the identity is the pod's name
(HOSTNAME) with a random suffix, so a restarted pod of the same name is a new candidate.
"""

from __future__ import annotations

import argparse

import pytest

from agentjobs.cli import run


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    return parser.parse_args(list(flags))


def test_without_the_flag_there_is_no_leader_election() -> None:
    assert run.leader_election(parse("--namespace", "team-a")) is None


@pytest.mark.parametrize(
    ("flags", "pod_namespace", "expected"),
    [
        (["--leader-election-namespace", "ops"], "agentjobs-system", "ops"),
        ([], "agentjobs-system", "agentjobs-system"),
        (["--namespace", "team-a", "--namespace", "team-b"], None, "team-a"),
        ([], None, "default"),
    ],
)
def test_the_leases_namespace_comes_from_the_flag_the_pod_or_the_watched_namespaces(
    monkeypatch: pytest.MonkeyPatch, flags: list[str], pod_namespace: str | None, expected: str
) -> None:
    if pod_namespace is None:
        monkeypatch.delenv("POD_NAMESPACE", raising=False)
    else:
        monkeypatch.setenv("POD_NAMESPACE", pod_namespace)
    election = run.leader_election(parse("--leader-election", "agentjobs", *flags))
    assert election is not None
    assert (election.name, election.namespace) == ("agentjobs", expected)


def test_the_identity_is_the_pods_name_with_a_random_suffix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOSTNAME", "agentjobs-7d9f-abcde")
    first = run.leader_election(parse("--leader-election", "agentjobs"))
    again = run.leader_election(parse("--leader-election", "agentjobs"))
    assert first is not None and again is not None
    assert first.identity.startswith("agentjobs-7d9f-abcde_")
    assert first.identity != again.identity
