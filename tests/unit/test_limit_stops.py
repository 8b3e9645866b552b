"""R70 in the pod, the phase core, the outcome and retries, as pure functions.

Cases: a phase with limits gets a stoppable pod (a timekeeper even without storage, the
stop annotation as a file only the timekeeper mounts, the stop token from its Secret in the
timekeeper's environment only, a startup probe before a liveness probe that runs every second
with the short grace and a timeout beyond the timekeeper's hold, the timeout kept by the
timekeeper and still read back as the timeout); a run a limit stopped ends as that limit's failure
whatever its exit and whatever the pod says after, but a cancel outweighs it; budgets are
blocked with a recoverable budget blocker that needs the user, turns and stuck failed;
budget and turn stops are never retried, a stuck one only when retry.on lists stuck; the
stop survives log checkpoints; the status shows each limit's use; a recovered last message
names the limit that stopped the agent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.contract import retry
from agentjobs.contract.artifacts import artifact_rule
from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.limits import guard
from agentjobs.contract.limits.guard import Crossing, Limit
from agentjobs.contract.outcome import outcome
from agentjobs.contract.phase import phase_core, phase_status
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.kube import agent_timeout, pods
from agentjobs.kube.pod_state import AgentState, Stage
from agentjobs.models.contract import (
    FailureClassification,
    FailureKind,
    PhaseStatus,
    SystemFailure,
    TaskOutcomeStatus,
)
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.retry import RetryOn, RetryPolicy
from agentjobs.sidecars import timekeeper
from tests.unit.test_agent_timeout import containers, ended, failure
from tests.unit.test_pods import SIDECARS, pod, spec

NOW = datetime(2026, 12, 4, tzinfo=UTC)
STOPPER = pods.Stopper(image="ghcr.io/agentjobs/agentjobs:0.1.0", secret="work-a1-stop-uid")


def stoppable(sidecars: pods.Sidecars | None = None, **fields: Any) -> dict[str, Any]:
    return pod(spec(limits={"idleSeconds": 30}, **fields), sidecars, STOPPER)


def test_without_storage_a_stoppable_pod_has_a_timekeeper_and_the_agents_short_grace() -> None:
    manifest = stoppable()
    by_name = containers(manifest)
    assert list(by_name) == ["agent", agent_timeout.TIMEKEEPER_CONTAINER]
    assert manifest["spec"]["terminationGracePeriodSeconds"] == agent_timeout.STOP_GRACE_SECONDS
    assert by_name[agent_timeout.TIMEKEEPER_CONTAINER]["image"] == STOPPER.image


def test_with_storage_the_harvester_keeps_the_pods_long_grace() -> None:
    manifest = stoppable(SIDECARS)
    assert manifest["spec"]["terminationGracePeriodSeconds"] == pods.STORAGE_GRACE_SECONDS


def test_the_stop_annotation_reaches_only_the_timekeeper_as_a_file() -> None:
    manifest = stoppable(SIDECARS)
    [volume] = [v for v in manifest["spec"]["volumes"] if v["name"] == agent_timeout.STOP_VOLUME]
    [item] = volume["downwardAPI"]["items"]
    assert item["fieldRef"]["fieldPath"] == "metadata.annotations['agentjobs.io/stop']"
    keeper = containers(manifest)[agent_timeout.TIMEKEEPER_CONTAINER]
    assert keeper["volumeMounts"] == [
        {"name": agent_timeout.STOP_VOLUME, "mountPath": agent_timeout.STOP_DIR, "readOnly": True}
    ]
    assert keeper["args"][-2:] == ["--stop-file", agent_timeout.STOP_FILE]
    mounted = [
        m["name"]
        for c in manifest["spec"]["containers"] + manifest["spec"]["initContainers"]
        if c["name"] != agent_timeout.TIMEKEEPER_CONTAINER
        for m in c.get("volumeMounts", [])
    ]
    assert agent_timeout.STOP_VOLUME not in mounted


def test_the_stop_token_reaches_only_the_timekeeper_from_its_secret() -> None:
    manifest = stoppable(SIDECARS)
    keeper = containers(manifest)[agent_timeout.TIMEKEEPER_CONTAINER]
    [token] = [e for e in keeper["env"] if e["name"] == agent_timeout.STOP_TOKEN_VARIABLE]
    assert token["valueFrom"] == {
        "secretKeyRef": {"name": STOPPER.secret, "key": agent_timeout.STOP_TOKEN_KEY}
    }
    others = [
        e["name"]
        for c in manifest["spec"]["containers"] + manifest["spec"]["initContainers"]
        if c["name"] != agent_timeout.TIMEKEEPER_CONTAINER
        for e in c.get("env", [])
    ]
    assert agent_timeout.STOP_TOKEN_VARIABLE not in others


def test_the_agent_is_probed_every_second_only_once_the_timekeeper_answers() -> None:
    agent = containers(stoppable())["agent"]
    startup, liveness = agent["startupProbe"], agent["livenessProbe"]
    assert startup["httpGet"]["path"] == agent_timeout.HEARTBEAT_PATH
    assert startup["failureThreshold"] * startup["periodSeconds"] >= 600
    assert liveness["httpGet"]["path"] == agent_timeout.STOP_PATH
    assert (liveness["periodSeconds"], liveness["failureThreshold"]) == (1, 1)
    assert liveness["terminationGracePeriodSeconds"] == agent_timeout.STOP_GRACE_SECONDS
    assert liveness["timeoutSeconds"] > timekeeper.HOLD_SECONDS + 1
    assert "initialDelaySeconds" not in liveness


def test_a_stoppable_pods_timeout_is_kept_by_its_timekeeper_and_read_back_as_the_timeout() -> None:
    manifest = stoppable(timeoutSeconds=5)
    keeper = containers(manifest)[agent_timeout.TIMEKEEPER_CONTAINER]
    assert keeper["args"][-2:] == [agent_timeout.TIMEOUT_ARGUMENT, "5"]
    late = ended(manifest, "2026-01-01T00:00:00Z", "2026-01-01T00:00:07Z", 137)
    found = failure(late)
    assert found is not None and found.kind is FailureKind.TIMEOUT
    assert failure(ended(manifest, "2026-01-01T00:00:00Z", "2026-01-01T00:00:03Z", 137)) is None


BUDGET = Crossing(Limit.COST, "1", "1.2").failure
TERMINATED = AgentState(Stage.TERMINATED, exit_code=0)


@pytest.mark.parametrize("interrupted", [None, BUDGET.model_copy(update={"code": "Evicted"})])
def test_a_stopped_run_is_the_limits_failure_whatever_its_exit_or_the_pod(
    interrupted: Any,
) -> None:
    run = phase_core.log_read(
        {},
        TERMINATED,
        phase_core.Stops(),
        stream_intact=True,
        noticed=interrupted,
        cli_error=None,
        stopped=BUDGET,
    )
    assert (run.system_failure, run.interrupted, run.exit_code) == (BUDGET, False, 0)


def test_a_cancel_outweighs_a_limits_stop() -> None:
    run = phase_core.log_read(
        {},
        TERMINATED,
        phase_core.Stops(cancel=True),
        stream_intact=True,
        noticed=None,
        cli_error=None,
        stopped=BUDGET,
    )
    assert run.cancelled


def test_the_pods_final_status_does_not_replace_a_limits_stop() -> None:
    pod = ended(stoppable(timeoutSeconds=5), "2026-01-01T00:00:00Z", "2026-01-01T00:00:09Z", 137)
    run = RunFacts(exit_code=137, stream_intact=True, system_failure=BUDGET)
    kept = phase_core.with_final_status(
        run, pod, "agent", phase_core.Stops(), deleted_by_operator=False
    )
    assert kept.system_failure == BUDGET


@pytest.mark.parametrize(
    ("limit", "status", "needs_user"),
    [
        (Limit.COST, TaskOutcomeStatus.BLOCKED, True),
        (Limit.TOKENS, TaskOutcomeStatus.BLOCKED, True),
        (Limit.TURNS, TaskOutcomeStatus.FAILED, False),
        (Limit.IDLE, TaskOutcomeStatus.FAILED, False),
    ],
)
def test_each_stops_outcome(limit: Limit, status: TaskOutcomeStatus, needs_user: bool) -> None:
    found = outcome.from_failure(Crossing(limit, "3", "4").failure, now=NOW)
    assert (found.status, found.needs_user_action) == (status, needs_user)
    [blocker] = found.blockers
    assert blocker.recoverable is (status is TaskOutcomeStatus.BLOCKED)
    if status is TaskOutcomeStatus.BLOCKED:
        assert blocker.type == "budget"
    assert (
        found.terminal_reason
        == {
            Limit.COST: "BudgetExceeded",
            Limit.TOKENS: "BudgetExceeded",
            Limit.TURNS: "MaxTurns",
            Limit.IDLE: "Stuck",
        }[limit]
    )


def concluded(limit: Limit) -> PhaseResourceStatus:
    return PhaseResourceStatus(
        status=PhaseStatus.FAILED,
        failure_classification=FailureClassification.PLATFORM,
        task_outcome=outcome.from_failure(Crossing(limit, "3", "4").failure, now=NOW),
    )


@pytest.mark.parametrize(
    ("limit", "retried_as"),
    [(Limit.COST, None), (Limit.TOKENS, None), (Limit.TURNS, None), (Limit.IDLE, RetryOn.STUCK)],
)
def test_budget_and_turn_stops_are_never_retried_a_stuck_one_is_its_own_class(
    limit: Limit, retried_as: RetryOn | None
) -> None:
    assert retry.retry_class(concluded(limit), interrupt_requested=False) is retried_as


def test_stuck_is_retried_only_where_the_policy_lists_it() -> None:
    assert RetryOn.STUCK not in RetryPolicy().on
    assert RetryOn.STUCK in RetryPolicy(on=[RetryOn.STUCK]).on


def test_the_stop_is_recorded_once_and_kept_through_log_checkpoints() -> None:
    status = phase_status.with_stop(PhaseResourceStatus(), BUDGET)
    assert status.log is not None and status.log.stopped_by == BUDGET
    later = Crossing(Limit.TURNS, "1", "2").failure
    assert phase_status.with_stop(status, later).log == status.log
    moved = phase_status.with_log_progress(status, bytes_read=10, sha256="ab")
    assert moved.log is not None and moved.log.stopped_by == BUDGET


def test_a_recovered_last_message_names_the_limit_that_stopped_the_agent() -> None:
    stop = Crossing(Limit.TURNS, "3", "4").failure
    words = guard.stop_words(stop)
    assert words == "the agent was stopped by its maxTurns (3 turns): it had used 4 turns"
    context = RecoveryContext(phase_name="fix", last_message="Half done.", stopped_by=words)
    content = artifact_rule.recovered_content(context)
    assert f"> **Stopped by a limit.** {words}." in content
    assert content.index("Stopped by a limit") < content.index("Half done.")
    crash = SystemFailure(kind=FailureKind.CRASH, code="exit_code_1", message="exit 1")
    assert guard.stop_words(crash) is None
    unstopped = artifact_rule.recovered_content(RecoveryContext("fix", "Half done."))
    assert "Stopped by a limit" not in unstopped
