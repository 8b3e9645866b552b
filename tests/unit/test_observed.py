"""What the operator keeps of each watched object: the object under its key, without the
managedFields nothing reads."""

from __future__ import annotations

from typing import Any

from agentjobs.runtime import observed


def phase(owners: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "ex-0-run",
            "namespace": "ns",
            "ownerReferences": owners,
            "managedFields": [{"manager": "agentjobs", "fieldsV1": {"f:status": {}}}],
        },
        "status": {"status": "running"},
    }


def test_a_phase_is_kept_under_its_controlling_executions_uid_only() -> None:
    body = phase([{"uid": "a", "controller": True}, {"uid": "b"}])
    assert list(observed.phase_entry(body)) == ["a"]


def test_a_phase_without_a_controller_is_not_kept() -> None:
    assert observed.phase_entry(phase([{"uid": "b"}])) == {}


def test_what_is_kept_has_everything_but_the_managed_fields() -> None:
    kept = observed.phase_entry(phase([{"uid": "a", "controller": True}]))["a"]
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["name"] == "ex-0-run" and kept["status"] == {"status": "running"}


def test_the_watched_objects_are_read_by_their_keys() -> None:
    body = phase([{"uid": "a", "controller": True}])
    watched = observed.Observed(
        executions={}, phases={"a": [body]}, pods={("ns", "ex-0-run-a1"): [body]}
    )
    assert watched.phases_of("a") == [body] and watched.phases_of("z") == []
    assert watched.pod("ns", "ex-0-run-a1") is body
    assert watched.execution("ns", "ex") is None
