"""ExecutionQueues on the local cluster (R75).

A watch of the namespace's Phases (in the API server's own order) counts the queue's
Executions that are running: an Execution runs from its first Phase's creation until that
Phase (its only one) ends. Cases: 20 Executions of mixed priorities, applied before their
queue exists, never have more than `maxRunning: 3` running, start in priority then creation
order, and all complete; with two replicas electing a leader, and the leader SIGKILLed twice
while it admits, still never more than 3, and all complete; an Execution whose queue does not
exist waits, saying so, and runs once the queue is made; one cancelled while it waits ends
cancelled with no Phase made.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from devcluster.layout import HOST_ADDRESS
from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    CREDENTIALS_LISTEN,
    OperatorProcess,
    Service,
    free_port,
    wait_finished,
    wait_for,
    working_script,
)

TERMINAL = {"completed", "failed", "cancelled", "interrupted"}


def execution(name: str, *, priority: int = 0, seconds: float = 1, queue: str = "agents") -> Any:
    script = working_script(seconds)
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "queue": queue,
            "priority": priority,
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Do it.",
                    "command": ["sh", "-c", script],
                }
            ],
        },
    }


def execution_queue(name: str, max_running: int) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "ExecutionQueue",
        "metadata": {"name": name},
        "spec": {"maxRunning": max_running},
    }


@dataclass
class PhaseWatch:
    """The namespace's Phases as a watch shows them: the order they were made in, and the
    most that were unfinished at once."""

    started: list[str] = field(default_factory=list)
    most_running: int = 0
    _ended: set[str] = field(default_factory=set)

    def see(self, event: dict[str, Any]) -> None:
        obj = event["object"]
        name = obj["metadata"]["name"]
        if name not in self.started:
            self.started.append(name)
        if (obj.get("status") or {}).get("status") in TERMINAL:
            self._ended.add(name)
        self.most_running = max(self.most_running, len(set(self.started) - self._ended))


@contextlib.contextmanager
def watching_phases(kubectl: Kubectl, namespace: str) -> Iterator[PhaseWatch]:
    seen = PhaseWatch()
    process = subprocess.Popen(
        ["kubectl", "get", "phases", "-n", namespace, "--watch", "--output-watch-events",
         "-o", "json"],
        env=kubectl.env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip

    def read() -> None:
        assert process.stdout is not None
        decoder, buffer = json.JSONDecoder(), ""
        for line in process.stdout:
            buffer += line
            with contextlib.suppress(json.JSONDecodeError):
                event, end = decoder.raw_decode(buffer.lstrip())
                buffer = buffer.lstrip()[end:]
                seen.see(event)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield seen
        time.sleep(1)  # the last events
    finally:
        process.terminate()
        process.wait(timeout=10)
        reader.join(timeout=10)
        assert process.stdout is not None
        process.stdout.close()


def rank(kubectl: Kubectl, namespace: str) -> list[str]:
    """The Executions in the order the queue takes them: priority, creation, name."""
    items = kubectl.json("get", "executions", "-n", namespace)["items"]
    items.sort(
        key=lambda e: (
            -e["spec"].get("priority", 0),
            e["metadata"]["creationTimestamp"],
            e["metadata"]["name"],
        )
    )
    return [e["metadata"]["name"] for e in items]


def run_twenty(kubectl: Kubectl, namespace: str, during: Any = None) -> PhaseWatch:
    """Twenty Executions of priorities 0-2 applied, then their queue of 3: the watch of
    their run, once all have completed."""
    names = [f"run-{n:02d}" for n in range(20)]
    for n, name in enumerate(names):
        kubectl.apply(execution(name, priority=n % 3), namespace)
    with watching_phases(kubectl, namespace) as seen:
        kubectl.apply(execution_queue("agents", 3), namespace)
        if during is not None:
            during(seen)
        for name in names:
            assert wait_finished(kubectl, namespace, name, timeout=240)["status"] == "completed"
    return seen


def assert_in_order(seen: PhaseWatch, ranked: list[str]) -> None:
    """One that ranks three or more places behind another never starts first: with 3
    places it cannot have been let in while that one waited."""
    started = [name.rsplit("-0-", 1)[0] for name in seen.started]
    assert sorted(started) == sorted(ranked)
    for ahead, name in enumerate(ranked):
        for behind in ranked[ahead + 3 :]:
            assert started.index(name) < started.index(behind), (name, behind, started)


def test_twenty_on_a_queue_of_three_never_run_more_than_three_and_start_in_order(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    seen = run_twenty(kubectl, namespace)
    assert seen.most_running == 3
    assert_in_order(seen, rank(kubectl, namespace))
    first = kubectl.json("get", "execution", rank(kubectl, namespace)[-1], "-n", namespace)
    assert first["status"]["queue"]["name"] == "agents"
    assert first["status"]["queue"]["admittedAt"] is not None
    queued = next(c for c in first["status"]["conditions"] if c["type"] == "Queued")
    assert (queued["status"], queued["reason"]) == ("False", "Admitted")


def test_a_missing_queue_holds_its_executions_and_a_queued_one_can_be_cancelled(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("first", queue="later", seconds=30), namespace)
    kubectl.apply(execution("second", queue="later"), namespace)

    def status(name: str) -> dict[str, Any]:
        return kubectl.json("get", "execution", name, "-n", namespace).get("status", {})

    wait_for(lambda: status("second").get("queue", {}).get("position") == 2, what="the place")
    waiting = status("first")
    assert waiting.get("status") is None and waiting["queue"] == {"name": "later", "position": 1}
    queued = next(c for c in waiting["conditions"] if c["type"] == "Queued")
    assert queued["status"] == "True"
    assert queued["message"] == "ExecutionQueue later does not exist"
    assert kubectl.json("get", "phases", "-n", namespace)["items"] == []

    kubectl.apply(execution_queue("later", 1), namespace)
    wait_for(lambda: status("first").get("status") == "running", what="the first to start")
    wait_for(lambda: status("second").get("queue", {}).get("position") == 1, what="a move up")
    kubectl.run(
        "patch", "-n", namespace, "execution", "second", "--type=merge",
        "-p", json.dumps({"spec": {"cancel": True}}),
    )  # fmt: skip
    assert wait_finished(kubectl, namespace, "second")["status"] == "cancelled"
    phases = kubectl.json("get", "phases", "-n", namespace)["items"]
    assert [p["spec"]["executionName"] for p in phases] == ["first"]
    ended = next(c for c in status("second")["conditions"] if c["type"] == "Queued")
    assert (ended["status"], ended["reason"]) == ("False", "Ended")


@pytest.fixture
def two_replicas(
    local_cluster: DevCluster, crds: None, namespace: str, tmp_path: Path
) -> Iterator[list[OperatorProcess]]:
    """Two replicas electing their leader, without storage; their endpoints behind one
    Service, as in test_leadership."""
    ports = [free_port(), free_port()]
    service = Service(ports)
    url = f"--credentials-url=https://{HOST_ADDRESS}:{service.port}"
    flags = ["--leader-election", "queue-test", url]
    processes = [
        OperatorProcess(
            local_cluster.env,
            namespace,
            tmp_path / f"replica-{n}.log",
            [*flags, f"{CREDENTIALS_LISTEN}={HOST_ADDRESS}:{port}"],
        )
        for n, port in enumerate(ports)
    ]
    with service:
        for process in processes:
            process.start()
        try:
            yield processes
        finally:
            for process in processes:
                process.stop()
                print(process.log()[-10000:])


def test_two_replicas_with_their_leader_killed_while_it_admits_still_run_three_at_most(
    kubectl: Kubectl, namespace: str, two_replicas: list[OperatorProcess]
) -> None:
    def kill_the_leader_twice(seen: PhaseWatch) -> None:
        for admitted in (2, 8):
            wait_for(
                lambda count=admitted: len(seen.started) >= count,
                timeout=120,
                what="admissions",
            )
            holder = kubectl.run(
                "get", "lease", "queue-test", "-n", namespace,
                "-o", "jsonpath={.spec.holderIdentity}",
            ).stdout  # fmt: skip
            leader = next(p for p in two_replicas if f"leading as {holder} " in p.log())
            leader.kill()
            leader.start()  # back as a follower, or the leader again once the lease ran out

    seen = run_twenty(kubectl, namespace, during=kill_the_leader_twice)
    assert seen.most_running <= 3
    assert len(seen.started) == 20  # each Execution's one Phase, made once
