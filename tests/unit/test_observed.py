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


def execution(spec: dict[str, Any], owners: list[dict[str, Any]]) -> dict[str, Any]:
    meta = {"name": "ex", "namespace": "ns", "uid": "u", "ownerReferences": owners}
    return {"metadata": meta, "spec": spec}


def test_an_execution_is_kept_under_each_key_it_is_looked_up_by() -> None:
    cron = {"uid": "c", "controller": True, "kind": "CronExecution"}
    body = execution({"queue": "gpu"}, [cron, {"uid": "d", "kind": "CronExecution"}])
    entries = observed.execution_entries(body)
    assert set(entries) == {
        observed.by_name("ns", "ex"),
        observed.by_queue("ns", "gpu"),
        observed.by_cron("c"),
    }
    watched = observed.Observed(
        executions={key: [kept] for key, kept in entries.items()}, phases={}, pods={}
    )
    assert watched.execution("ns", "ex") == entries[observed.by_name("ns", "ex")]
    assert watched.executions_in_queue("ns", "gpu") == [entries[observed.by_queue("ns", "gpu")]]
    assert watched.executions_owned_by("c") and not watched.executions_owned_by("d")
    assert watched.execution("ns", "gpu") is None and watched.executions_in_queue("ns", "ex") == []


def test_an_execution_without_a_queue_or_a_cron_is_kept_under_its_name_only() -> None:
    body = execution({}, [{"uid": "c", "controller": True, "kind": "Execution"}])
    assert list(observed.execution_entries(body)) == [observed.by_name("ns", "ex")]


def test_a_pod_is_kept_without_its_prompt_and_its_other_annotations_stay() -> None:
    body = {
        "metadata": {
            "name": "ex-0-run-a1",
            "namespace": "ns",
            "annotations": {"agentjobs.io/prompt": "x" * 16384, "agentjobs.io/other": "kept"},
            "managedFields": [{"manager": "agentjobs"}],
        },
        "status": {"phase": "Running"},
    }
    kept = observed.pod_entry(body)[("ns", "ex-0-run-a1")]
    assert kept["metadata"]["annotations"] == {"agentjobs.io/other": "kept"}
    assert "managedFields" not in kept["metadata"] and kept["status"] == {"phase": "Running"}
    assert "agentjobs.io/prompt" in body["metadata"]["annotations"]  # the event's own is whole
