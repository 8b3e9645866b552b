"""timeoutSeconds: the kubelet stops the agent with a short grace, the harvester keeps its own.

Cases: the agent's liveness probe first runs at the deadline and carries the short
grace; without storage the pod's grace is that short one and there is no timekeeper;
with storage the timekeeper keeps a regular container running beside the agent (so
the kubelet uses the probe's grace, not the pod's), hardened and limited like the
sidecars, and the harvester keeps 3600 s;
no activeDeadlineSeconds; an agent that ran its whole timeoutSeconds reads as the
timeout failure (R15, R21), one that ended before it does not; the timekeeper exits
when the heartbeat stops, soon after the timeout probe, and not before.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agentjobs.kube import agent_timeout, pod_state, pods
from agentjobs.models.contract import FailureKind
from agentjobs.models.kubernetes import ResourceRequirements
from agentjobs.sidecars.timekeeper import AFTER_TIMEOUT_SECONDS, SILENCE_SECONDS, Timekeeper
from tests.unit.test_pods import SIDECARS, pod, spec


def containers(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in manifest["spec"]["containers"]}


def test_the_agents_liveness_probe_first_runs_at_the_deadline_with_a_short_grace() -> None:
    probe = containers(pod(spec(timeoutSeconds=30)))["agent"]["livenessProbe"]
    assert probe["initialDelaySeconds"] == 30
    assert probe["terminationGracePeriodSeconds"] == agent_timeout.STOP_GRACE_SECONDS < 10
    assert (probe["periodSeconds"], probe["failureThreshold"]) == (1, 1)
    assert probe["httpGet"] == {
        "path": agent_timeout.TIMEOUT_PATH,
        "port": agent_timeout.TIMEKEEPER_PORT,
    }


def test_no_pod_deadline_which_would_give_the_agent_the_harvesters_grace() -> None:
    for sidecars in (None, SIDECARS):
        assert "activeDeadlineSeconds" not in pod(spec(timeoutSeconds=30), sidecars)["spec"]


def test_without_a_timeout_nothing_is_added() -> None:
    for sidecars in (None, SIDECARS):
        manifest = pod(spec(), sidecars)
        assert list(containers(manifest)) == ["agent"]
        assert "livenessProbe" not in containers(manifest)["agent"]
    assert "terminationGracePeriodSeconds" not in pod(spec())["spec"]


def test_without_storage_the_pods_grace_is_the_agents_short_one() -> None:
    manifest = pod(spec(timeoutSeconds=5))
    assert manifest["spec"]["terminationGracePeriodSeconds"] == agent_timeout.STOP_GRACE_SECONDS
    assert list(containers(manifest)) == ["agent"]


def test_with_storage_a_timekeeper_runs_beside_the_agent_and_the_harvester_keeps_its_grace() -> (
    None
):
    manifest = pod(spec(timeoutSeconds=5), SIDECARS)
    by_name = containers(manifest)
    assert list(by_name) == ["agent", agent_timeout.TIMEKEEPER_CONTAINER]
    assert manifest["spec"]["terminationGracePeriodSeconds"] == pods.STORAGE_GRACE_SECONDS
    keeper = by_name[agent_timeout.TIMEKEEPER_CONTAINER]
    assert keeper["image"] == SIDECARS.image
    assert keeper["args"][0] == "timekeeper"
    assert "restartPolicy" not in keeper  # a regular container, counted by the kubelet
    assert keeper["env"] == [
        {
            "name": agent_timeout.POD_IP_VARIABLE,
            "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
        }
    ]
    heartbeat = by_name["agent"]["readinessProbe"]
    assert heartbeat["httpGet"]["path"] == agent_timeout.HEARTBEAT_PATH
    # The first heartbeat comes before the timekeeper would take the silence for the end.
    assert heartbeat["initialDelaySeconds"] + heartbeat["periodSeconds"] < SILENCE_SECONDS
    assert "terminationGracePeriodSeconds" not in heartbeat  # not allowed on readiness


def test_the_timekeeper_is_hardened_and_limited_like_the_sidecars() -> None:
    limits = ResourceRequirements.model_validate({"limits": {"cpu": "100m", "memory": "64Mi"}})
    manifest = pod(spec(timeoutSeconds=5), dataclasses.replace(SIDECARS, resources=limits))
    keeper = containers(manifest)[agent_timeout.TIMEKEEPER_CONTAINER]
    harvester = manifest["spec"]["initContainers"][0]
    assert keeper["securityContext"] == harvester["securityContext"]
    assert keeper["securityContext"]["allowPrivilegeEscalation"] is False
    assert (
        keeper["resources"]
        == harvester["resources"]
        == {"limits": {"cpu": "100m", "memory": "64Mi"}}
    )


def ended(manifest: dict[str, Any], started: str, finished: str, code: int) -> dict[str, Any]:
    terminated = {"exitCode": code, "reason": "Error", "startedAt": started, "finishedAt": finished}
    status = {
        "phase": "Failed",
        "containerStatuses": [{"name": "agent", "state": {"terminated": terminated}}],
    }
    return {**manifest, "status": status}


def failure(manifest: dict[str, Any]) -> Any:
    state = pod_state.agent_state(manifest, "agent")
    return pod_state.termination_failure(manifest, state)


def test_r21_an_agent_stopped_at_its_timeout_is_the_timeout_failure() -> None:
    for code in (137, 143, 0):  # SIGKILL, SIGTERM, or a clean exit on SIGTERM
        manifest = ended(
            pod(spec(timeoutSeconds=5)), "2026-01-01T00:00:00Z", "2026-01-01T00:00:08Z", code
        )
        found = failure(manifest)
        assert found is not None and found.kind is FailureKind.TIMEOUT
        assert "timeoutSeconds (5 s)" in found.message


def test_an_agent_that_ended_before_its_timeout_is_judged_by_its_exit() -> None:
    early = ended(pod(spec(timeoutSeconds=5)), "2026-01-01T00:00:00Z", "2026-01-01T00:00:04Z", 0)
    assert failure(early) is None
    crashed = ended(pod(spec(timeoutSeconds=5)), "2026-01-01T00:00:00Z", "2026-01-01T00:00:04Z", 3)
    assert failure(crashed) is None  # an exit code of its own, classified by resolution
    untimed = ended(pod(spec()), "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", 137)
    assert failure(untimed) is None


def test_the_timekeeper_stays_while_the_heartbeat_comes() -> None:
    keeper = Timekeeper(started=100.0)
    for second in range(1, 30):
        keeper.heartbeat(100.0 + second)
        assert not keeper.done(100.5 + second)


def test_the_timekeeper_exits_once_the_heartbeat_stops_or_never_came() -> None:
    keeper = Timekeeper(started=100.0)
    assert not keeper.done(100.0 + SILENCE_SECONDS - 0.1)
    assert keeper.done(100.0 + SILENCE_SECONDS)
    keeper.heartbeat(200.0)
    assert not keeper.done(201.0)
    assert keeper.done(200.0 + SILENCE_SECONDS)


def test_the_timekeeper_outlives_the_start_of_the_kill_and_no_more() -> None:
    keeper = Timekeeper(started=100.0)
    keeper.timeout(105.0)
    keeper.heartbeat(106.0)  # the agent still runs through its grace
    keeper.timeout(106.0)  # a repeated probe does not move the time
    assert not keeper.done(105.0 + AFTER_TIMEOUT_SECONDS - 0.1)
    assert keeper.done(105.0 + AFTER_TIMEOUT_SECONDS)
