"""Two replicas elect their leader by a Lease: one phase never has two runners.

Two `agentjobs run --leader-election NAME` processes watch one namespace; the
first leads, the second follows. An Execution's phase runs for about ten
seconds, and the leader goes away in the middle of it. Each process logs when a
runner starts and stops for a phase. Cases:

- the leader frozen (SIGSTOP): the follower takes over no sooner than the old
  leader's renew deadline, so their runners never overlap; thawed (SIGCONT), the
  old leader logs that it lost leadership and stopped its runner before it logs
  anything else, and starts none; the execution completes with the agent's
  verdict; one pod ran (no `-a2`), never restarted;
- the leader terminated (SIGTERM): it stops its runner, then releases the Lease,
  and the follower takes over within seconds, its runner starting after the old
  one stopped; the same verdict and the same single pod.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from agentjobs.kube import lease
from devcluster.layout import HOST_ADDRESS
from devcluster.testing import DevCluster, Kubectl
from tests.integration.operator_fixtures import (
    CREDENTIALS_LISTEN,
    OperatorProcess,
    Service,
    apply_manifest,
    free_port,
    phase_status,
    wait_finished,
    wait_for,
)

# Alone on the cluster (make test's second lane): it measures takeover times.
pytestmark = pytest.mark.exclusive

LEASE = "agentjobs-test"
EXECUTION = "leadership"
PHASE = f"{EXECUTION}-0-slow"
POD = f"{PHASE}-a1"
THAWED = "--- the test sent SIGCONT here ---"


@dataclass
class Replicas:
    leader: OperatorProcess
    follower: OperatorProcess
    leader_log: Path


def timestamp(line: str) -> float:
    """The time of one of the operator's log lines (`2026-05-01 12:00:00,123 INFO ...`)."""
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def runner_lines(process: OperatorProcess, namespace: str, what: str) -> list[str]:
    marker = f"phase {namespace}/{PHASE}: runner {what}"
    return [line for line in process.log().splitlines() if line.endswith(marker)]


@pytest.fixture
def replicas(
    local_cluster: DevCluster, crds: None, namespace: str, tmp_path: Path
) -> Iterator[Replicas]:
    # Each replica's endpoint on a port of its own (one process per port), and one Service in
    # front of both, whose URL the pods get from either.
    ports = [free_port(), free_port()]
    service = Service(ports)
    url = f"--credentials-url=https://{HOST_ADDRESS}:{service.port}"
    flags = ["--leader-election", LEASE, url]
    leader_log = tmp_path / "leader.log"
    leader, follower = (
        OperatorProcess(
            local_cluster.env,
            namespace,
            log,
            [*flags, f"{CREDENTIALS_LISTEN}={HOST_ADDRESS}:{port}"],
        )
        for log, port in zip((leader_log, tmp_path / "follower.log"), ports, strict=True)
    )
    with service:
        leader.start()
        try:
            wait_for(lambda: "leading as" in leader.log(), timeout=30, what="the first to lead")
            follower.start()
            # The follower has read the Lease and seen who holds it.
            wait_for(lambda: f"{namespace}/{LEASE} is held by" in follower.log(), timeout=30)
            assert "leading as" not in follower.log()
            yield Replicas(leader=leader, follower=follower, leader_log=leader_log)
        finally:
            for process in (leader, follower):
                with contextlib.suppress(AssertionError, ProcessLookupError):  # never started
                    process.send(signal.SIGCONT)  # a frozen process cannot hear SIGTERM
                process.stop()
            print("leader:\n" + leader.log()[-20000:])  # shown by pytest when the test failed
            print("follower:\n" + follower.log()[-20000:])


def start_mid_phase(kubectl: Kubectl, namespace: str, replicas: Replicas) -> None:
    apply_manifest(kubectl, namespace, "leadership.yaml")
    wait_for(
        lambda: "step 3" in kubectl.run("logs", "-n", namespace, POD, check=False).stdout,
        what="the phase to be under way",
    )
    assert runner_lines(replicas.leader, namespace, "started")
    assert not runner_lines(replicas.follower, namespace, "started")


def assert_one_clean_run(kubectl: Kubectl, namespace: str, replicas: Replicas) -> None:
    status = wait_finished(kubectl, namespace, EXECUTION)
    assert status["status"] == "completed"
    phase = phase_status(kubectl, namespace, PHASE)
    assert (phase["report"]["comments"], phase["attempt"]) == ("counted to ten", 1)
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]
    assert [p["metadata"]["name"] for p in pods] == [POD]
    assert pods[0]["status"]["containerStatuses"][0]["restartCount"] == 0
    events = kubectl.json("get", "events", "-n", namespace)["items"]
    assert any(e["involvedObject"]["name"] == EXECUTION for e in events)  # posted by the new leader
    for process in (replicas.leader, replicas.follower):
        assert "Traceback" not in process.log()


def test_a_frozen_leader_is_replaced_and_stops_its_runner_first_thing_when_thawed(
    kubectl: Kubectl, namespace: str, replicas: Replicas
) -> None:
    start_mid_phase(kubectl, namespace, replicas)
    replicas.leader.send(signal.SIGSTOP)
    frozen_at = time.time()
    wait_for(
        lambda: runner_lines(replicas.follower, namespace, "started"),
        timeout=40,
        what="the follower to take over the phase",
    )
    (started,) = runner_lines(replicas.follower, namespace, "started")
    takeover = timestamp(started) - frozen_at
    print(f"takeover: the follower's runner started {takeover:.1f} s after the freeze")
    # The old leader's last renewal began before the freeze, so by its own clock it stopped
    # leading no later than the renew deadline after it: the two runners never overlapped.
    assert lease.RENEW_DEADLINE_SECONDS <= takeover < lease.LEASE_DURATION_SECONDS + 10

    with replicas.leader_log.open("a") as log:
        log.write(THAWED + "\n")
    replicas.leader.send(signal.SIGCONT)
    wait_for(
        lambda: runner_lines(replicas.leader, namespace, "stopped"),
        timeout=10,
        what="the thawed leader to stop its runner",
    )
    thawed = replicas.leader.log().split(THAWED, 1)[1].splitlines()
    ours = [line for line in thawed if " agentjobs." in line]
    stop = next(i for i, line in enumerate(ours) if line.endswith(": runner stopped"))
    print("\n".join(ours[: stop + 1]))
    assert any("lost leadership" in line for line in ours), ours
    # Before its runner stopped, it said only that it lost leadership and was stopping.
    assert all("lost leadership" in line or "stopped" in line for line in ours[:stop]), ours
    assert len(runner_lines(replicas.leader, namespace, "started")) == 1

    assert_one_clean_run(kubectl, namespace, replicas)
    assert len(runner_lines(replicas.follower, namespace, "started")) == 1


def test_a_terminated_leader_stops_its_runner_then_hands_over_at_once(
    kubectl: Kubectl, namespace: str, replicas: Replicas
) -> None:
    start_mid_phase(kubectl, namespace, replicas)
    terminated_at = time.time()
    replicas.leader.stop()
    assert "released" in replicas.leader.log()
    wait_for(
        lambda: runner_lines(replicas.follower, namespace, "started"),
        timeout=20,
        what="the follower to take over the phase",
    )
    (stopped,) = runner_lines(replicas.leader, namespace, "stopped")
    (started,) = runner_lines(replicas.follower, namespace, "started")
    print(f"takeover: the follower's runner started {timestamp(started) - terminated_at:.1f} s")
    assert timestamp(stopped) <= timestamp(started)
    # A released Lease is taken at the follower's next attempt, not after it expires.
    assert timestamp(started) - terminated_at < lease.RENEW_DEADLINE_SECONDS

    assert_one_clean_run(kubectl, namespace, replicas)
