"""Verdicts that survive chaos: Executions run while everything around them fails.

While the Executions of tests/chaos/plan.py run, the operator is SIGKILLed at random
moments and restarted, the API server and the S3 store are restarted, the kubelet's
connections (the agents' followed logs among them) are cut with `ss -K`, and pods, Phases
and Executions are deleted from outside (the last applied again under the same name).
Afterwards every Execution has exactly its agent's verdict (``interrupted`` where it was
cut), every phase ran one pod, every object is owned by the resource it belongs to, nothing
is stuck, and no status is written again in the 10 s after the end. The Executions that work
on a repository (served by the real git server) also kill the operator at two points of
their own: while a phase's checkout fetches ("during clone") and while its harvester pushes
("during push"); afterwards each work branch holds every phase's commit exactly once, each
pushed by one request (nothing pushed twice, no push lost), as every Phase's status says.

``make test`` runs a short version; ``make chaos`` runs 100 kills over 50 Executions
(AGENTJOBS_CHAOS_KILLS, AGENTJOBS_CHAOS_EXECUTIONS; AGENTJOBS_CHAOS_SEED repeats a run).
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from devcluster import testing
from devcluster.git_server import GitServer, Token
from devcluster.layout import HOST_ADDRESS
from devcluster.testing import DevCluster, Kubectl
from tests.chaos.plan import Planned, plan
from tests.integration.operator_fixtures import OperatorProcess, running

# Alone on the cluster (make test's second lane): it restarts the API server and the S3 stores.
pytestmark = pytest.mark.exclusive

T = TypeVar("T")
KILLS = int(os.environ.get("AGENTJOBS_CHAOS_KILLS", "10"))
EXECUTIONS = int(os.environ.get("AGENTJOBS_CHAOS_EXECUTIONS", "10"))
SEED = int(os.environ.get("AGENTJOBS_CHAOS_SEED", str(random.SystemRandom().randrange(10**6))))
WAVE = 10
WAVE_TIMEOUT = 300.0
TOKEN = Token("chaos-token-0123456789")
# Where the operator is killed while a repository's git request is in flight.
GIT_KILL_POINTS = {"git-upload-pack": "during clone", "git-receive-pack": "during push"}


def patiently(action: Callable[[], T], timeout: float = 60) -> T:
    """``action``, tried again while the API server is restarting."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return action()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class Chaos:
    def __init__(
        self, kubectl: Kubectl, namespace: str, operator: OperatorProcess, rng: random.Random
    ) -> None:
        self.kubectl = kubectl
        self.namespace = namespace
        self.operator = operator
        self.rng = rng
        self.kills = 0
        self.cut: set[str] = set()
        self.incarnation: dict[str, int] = {}
        self.git_kills: dict[str, int] = {}
        self._lock = threading.Lock()  # the git server's threads kill too

    def get(self, kind: str) -> list[Any]:
        items: list[Any] = patiently(
            lambda: self.kubectl.json("get", kind, "-n", self.namespace)["items"]
        )
        return items

    def run(self, *args: str) -> None:
        patiently(lambda: self.kubectl.run(*args, "-n", self.namespace))

    def apply(self, planned: Planned, incarnation: int = 1) -> None:
        self.incarnation[planned.name] = incarnation
        patiently(lambda: self.kubectl.apply(planned.manifest(incarnation), self.namespace))

    def kill_operator(self) -> None:
        with self._lock:
            self.operator.kill()
            time.sleep(self.rng.uniform(0, 1.0))
            self.operator.start()
            self.kills += 1

    def at_git_request(self, method: str, path: str) -> None:
        """A kill point: a clone's fetch or a push reached the git server, not yet served."""
        point = GIT_KILL_POINTS.get(path.rsplit("/", 1)[-1])
        if method != "POST" or point is None:
            return
        with self._lock:
            print(f"{time.strftime('%H:%M:%S')} kill {point}: {path}", flush=True)
            self.operator.kill()
            time.sleep(0.2)
            self.operator.start()
            self.git_kills[point] = self.git_kills.get(point, 0) + 1

    def cut_from_outside(self, wave: list[Planned]) -> None:
        """Cut each marked Execution once its first agent is running."""
        running = {
            pod["metadata"]["name"]
            for pod in self.get("pods")
            if any(
                c["name"] == "agent" and "running" in c.get("state", {})
                for c in pod.get("status", {}).get("containerStatuses") or []
            )
        }
        for planned in wave:
            pod = f"{planned.name}-0-p0-a1"
            if planned.fault == "none" or planned.name in self.cut or pod not in running:
                continue
            self.cut.add(planned.name)
            print(f"{time.strftime('%H:%M:%S')} cut {planned.name}: {planned.fault}", flush=True)
            if planned.fault == "delete-pod":
                self.run("delete", "pod", pod, "--wait=false")
            elif planned.fault == "delete-phase":
                self.run("delete", "phase", f"{planned.name}-0-p0", "--wait=false")
            else:
                self.run("delete", "execution", planned.name, "--wait=false")
                self.apply(planned, incarnation=2)

    def unfinished(self, wave: list[Planned]) -> list[str]:
        """The Executions of ``wave`` not finished yet, with their status."""
        by_name = {e["metadata"]["name"]: e for e in self.get("executions")}
        waiting = []
        for planned in wave:
            execution = by_name.get(planned.name)
            reapplied = planned.fault != "reapply" or self.incarnation[planned.name] == 2
            status = (execution or {}).get("status") or {}
            conditions = status.get("conditions") or []
            if not (
                execution
                and reapplied
                and any(c["type"] == "Finished" and c["status"] == "True" for c in conditions)
            ):
                outcome = (status.get("taskOutcome") or {}).get("summary")
                waiting.append(
                    f"{planned.name} ({planned.fault}): {status.get('status')} {outcome}"
                )
        return waiting


def check_verdicts(chaos: Chaos, planned: list[Planned]) -> list[str]:
    wrong = []
    executions = {e["metadata"]["name"]: e for e in chaos.get("executions")}
    phases = {p["metadata"]["name"]: p for p in chaos.get("phases")}
    for item in planned:
        status = executions[item.name].get("status", {})
        if status.get("status") != item.expected_status:
            summary = (status.get("taskOutcome") or {}).get("summary")
            wrong.append(
                f"{item.name}: {status.get('status')} ({summary}), not {item.expected_status}"
            )
            continue
        if item.expected_status == "interrupted":
            continue
        for index in range(item.phases):
            phase = phases[f"{item.name}-{index}-p{index}"].get("status", {})
            comment = (phase.get("report") or {}).get("comments")
            expected = item.comment(index, chaos.incarnation[item.name])
            if comment != expected or phase.get("streamIntact") is not True:
                wrong.append(f"{item.name} phase {index}: {comment!r}, {phase.get('streamIntact')}")
        if item.ending == "refused" and status.get("failureClassification") != "correct_refusal":
            wrong.append(f"{item.name}: {status.get('failureClassification')}, not a refusal")
        if item.ending == "crash" and status.get("failureClassification") != "platform":
            wrong.append(f"{item.name}: {status.get('failureClassification')}, not platform")
    return wrong


def check_pushes(chaos: Chaos, planned: list[Planned], server: GitServer) -> list[str]:
    """Each work branch holds every phase's commit once, each pushed by one request, and
    every Phase says it was pushed."""
    wrong = []
    phases = {p["metadata"]["name"]: p for p in chaos.get("phases")}
    for item in planned:
        if item.repository is None:
            continue
        commits = server.commits(item.name, f"agentjobs/{item.name}")
        if commits != item.pushed_commits():
            wrong.append(f"{item.name}: the branch holds {commits}")
        pushes = [
            r for r in server.requests if r[:2] == ("POST", f"/{item.name}.git/git-receive-pack")
        ]
        if len(pushes) != item.phases:
            wrong.append(f"{item.name}: {len(pushes)} pushes for {item.phases} phase(s)")
        for index in range(item.phases):
            status = phases[f"{item.name}-{index}-p{index}"].get("status", {})
            entries = status.get("repositories") or [{}]
            if entries[0].get("pushed") is not True:
                wrong.append(f"{item.name} phase {index}: {entries}")
    return wrong


def check_children(chaos: Chaos) -> list[str]:
    """One pod per phase, each object owned by the resource of its name."""
    wrong = []
    executions = {e["metadata"]["name"]: e["metadata"]["uid"] for e in chaos.get("executions")}
    phases = {p["metadata"]["name"]: p for p in chaos.get("phases")}
    for name, phase in phases.items():
        owner = phase["metadata"]["ownerReferences"][0]["uid"]
        if owner != executions.get(phase["spec"]["executionName"]):
            wrong.append(f"phase {name} is owned by {owner}")
    pods_of: dict[str, list[str]] = {}
    for pod in chaos.get("pods"):
        name, owner = pod["metadata"]["name"], pod["metadata"]["ownerReferences"][0]["uid"]
        phase_name = pod["metadata"]["labels"]["agentjobs.io/phase"]
        pods_of.setdefault(phase_name, []).append(name)
        if phase_name not in phases or phases[phase_name]["metadata"]["uid"] != owner:
            wrong.append(f"pod {name} is owned by {owner}, not by Phase {phase_name}")
        restarts = [c.get("restartCount", 0) for c in pod["status"].get("containerStatuses") or []]
        if any(restarts):
            wrong.append(f"pod {name} restarted a container")
    for config_map in chaos.get("configmaps"):
        refs = config_map["metadata"].get("ownerReferences") or []
        phase_name = config_map["metadata"]["name"].removesuffix("-prompt")
        if refs and (
            phase_name not in phases or phases[phase_name]["metadata"]["uid"] != refs[0]["uid"]
        ):
            wrong.append(f"configmap {config_map['metadata']['name']} has the wrong owner")
    wrong += [f"phase {p} ran pods {names}" for p, names in pods_of.items() if len(names) > 1]
    return wrong


def check_one_pod_each(chaos: Chaos, planned: list[Planned]) -> list[str]:
    """No pod name was ever scheduled twice, but for a re-applied Execution's own pod."""
    uids: dict[str, set[str]] = {}
    for event in chaos.get("events"):
        involved = event.get("involvedObject") or {}
        if event.get("reason") == "Scheduled" and involved.get("kind") == "Pod":
            uids.setdefault(involved["name"], set()).add(involved["uid"])
    reapplied = {f"{p.name}-0-p0-a1" for p in planned if p.fault == "reapply"}
    return [
        f"pod {name} ran {len(found)} times"
        for name, found in uids.items()
        if len(found) > (2 if name in reapplied else 1)
    ]


def settled_versions(chaos: Chaos) -> dict[str, str]:
    return {
        f"{item['kind']}/{item['metadata']['name']}": item["metadata"]["resourceVersion"]
        for kind in ("executions", "phases")
        for item in chaos.get(kind)
    }


@pytest.fixture
def chaos_operator(
    local_cluster: DevCluster, crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator with a pending timeout a loaded machine can meet: under chaos the node
    may miss a heartbeat, and the short timeout of the other tests would fail a phase whose
    pod only waits to be scheduled."""
    extra = ["--pending-timeout", "120", f"--git-allow=http://{HOST_ADDRESS}:*/*"]
    process = OperatorProcess(local_cluster.env, namespace, tmp_path / "operator.log", extra)
    yield from running(process)


@pytest.fixture
def chaos_git(tmp_path: Path) -> Iterator[tuple[GitServer, list[Chaos]]]:
    """The git server of the Executions that work on a repository; its requests are kill
    points of the chaos run put in the list once it exists."""
    runs: list[Chaos] = []

    def before(method: str, path: str) -> None:
        for chaos in runs:
            chaos.at_git_request(method, path)

    with GitServer(tmp_path / "git", tokens=[TOKEN], host=HOST_ADDRESS, before=before) as server:
        yield server, runs


def test_every_verdict_survives_kills_restarts_drops_and_deletions(
    kubectl: Kubectl,
    namespace: str,
    chaos_operator: OperatorProcess,
    chaos_git: tuple[GitServer, list[Chaos]],
) -> None:
    operator = chaos_operator
    server, runs = chaos_git
    print(f"chaos seed {SEED}: {EXECUTIONS} executions, {KILLS} kills")
    rng = random.Random(SEED)
    planned = plan(EXECUTIONS, rng, lambda name: server.create(name, {"README.md": f"{name}\n"}))
    kubectl.run(
        "create", "secret", "generic", "git", "-n", namespace, f"--from-literal=token={TOKEN.value}"
    )
    chaos = Chaos(kubectl, namespace, operator, rng)
    runs.append(chaos)
    waves = [planned[i : i + WAVE] for i in range(0, len(planned), WAVE)]
    kills_per_wave = math.ceil(KILLS / len(waves))
    for number, wave in enumerate(waves):
        for item in wave:
            chaos.apply(item)
        restarts = ["apiserver", "s3"] if number == 0 else []
        kills = min(kills_per_wave, KILLS - chaos.kills)
        deadline = time.monotonic() + WAVE_TIMEOUT
        waiting: list[str] = []
        # Restarts come first and cuts only once they are over: an Execution deleted while
        # the API server comes back is left to the garbage collector, which then takes
        # minutes to remove its children (the operator waits for them, never adopts them).
        for component in restarts:
            time.sleep(rng.uniform(0.3, 2.0))
            testing.restart(component)
        cuts_from = time.monotonic() + (10 if restarts else 0)
        while kills or (waiting := chaos.unfinished(wave)):
            assert time.monotonic() < deadline, f"stuck (seed {SEED}): {waiting}"
            if time.monotonic() >= cuts_from:
                chaos.cut_from_outside(wave)
            time.sleep(rng.uniform(0.3, 2.0))
            if rng.random() < 0.3:
                # Every log stream the API server proxies from the kubelet, cut mid-read.
                testing.cut_kubelet_connections()
            if kills:
                chaos.kill_operator()
                kills -= 1
    wrong = check_verdicts(chaos, planned) + check_one_pod_each(chaos, planned)
    assert not wrong, f"wrong verdicts (seed {SEED}): {wrong}"
    runs.clear()  # no more kills: the checks read the API
    wrong = check_pushes(chaos, planned, server)
    assert not wrong, f"wrong pushes (seed {SEED}): {wrong}"
    if any(item.repository for item in planned):
        assert set(chaos.git_kills) == set(GIT_KILL_POINTS.values()), chaos.git_kills
    time.sleep(5)  # the garbage collector removes the first incarnations' children
    wrong = check_children(chaos)
    assert not wrong, f"wrong children (seed {SEED}): {wrong}"
    before = settled_versions(chaos)
    time.sleep(10)
    assert settled_versions(chaos) == before, f"statuses still written (seed {SEED})"
    assert chaos.kills == KILLS
