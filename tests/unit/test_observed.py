"""What the operator keeps of each watched object: the object under its key, without the
managedFields nothing reads; a pod with only the spec the operator reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentjobs.contract.resolution import pod_start
from agentjobs.kube import pod_state
from agentjobs.models.contract import SystemFailure
from agentjobs.runtime import observed
from tests.unit.test_agent_timeout import ended
from tests.unit.test_limit_stops import STOPPER
from tests.unit.test_pods import SIDECARS, pod, spec


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


def kept_pod(body: dict[str, Any]) -> dict[str, Any]:
    return next(iter(observed.pod_entry(body).values()))


def test_a_kept_pod_has_only_the_spec_the_operator_reads() -> None:
    manifest = pod(spec(timeoutSeconds=5), SIDECARS)
    kept = kept_pod(manifest)
    assert set(kept["spec"]) == {"restartPolicy", "initContainers", "containers"}
    for container in kept["spec"]["containers"] + kept["spec"]["initContainers"]:
        assert set(container) <= set(observed.CONTAINER_READ) and "name" in container
    assert kept["metadata"] == manifest["metadata"]
    assert "volumes" in manifest["spec"] and "env" in manifest["spec"]["containers"][0]  # whole


def test_a_kept_pod_is_judged_as_the_whole_pod_is() -> None:
    """The timeout (the agent's probe, or a stoppable pod's timekeeper's arguments), the
    sidecars' restart policies and the scheduling gates read the same from what is kept."""
    for sidecars, stopper in ((None, None), (SIDECARS, None), (SIDECARS, STOPPER)):
        for code in (137, 0):
            whole = ended(
                pod(spec(timeoutSeconds=5), sidecars, stopper=stopper),
                "2026-01-01T00:00:00Z",
                "2026-01-01T00:00:08Z",
                code,
            )
            state = pod_state.agent_state(whole, "agent")
            found = pod_state.termination_failure(whole, state)
            assert found is not None and found.code == "DeadlineExceeded"
            assert pod_state.termination_failure(kept_pod(whole), state) == found
    crashing = pod(spec(), SIDECARS)
    crashing["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    assert pod_start.scheduling_gates(kept_pod(crashing)) == ("example.com/quota",)
    del crashing["spec"]["schedulingGates"]
    crashing["status"] = {
        "phase": "Pending",
        "containerStatuses": [
            {"name": "agent", "state": {"waiting": {"reason": "PodInitializing"}}}
        ],
        "initContainerStatuses": [
            {
                "name": "harvester",
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
                "restartCount": 3,
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        ],
    }
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    decided = pod_start.decide(crashing, "agent", now=now, timeout=300)
    assert isinstance(decided, SystemFailure)  # a sidecar's third failure ends it now
    assert pod_start.decide(kept_pod(crashing), "agent", now=now, timeout=300) == decided
