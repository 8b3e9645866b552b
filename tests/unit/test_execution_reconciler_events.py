"""How the Execution reconciler treats the events that call it (no cluster: the in-memory
API of tests/memory_kube.py, which records every request).

Cases:
- a reconcile that creates a Phase writes the status with it listed; neither that write's
  event nor the Phase's own (the Phase just made) needs a reconcile, and a later change of
  that Phase does;
- the event of the reconciler's own last status write is known as that write's echo, once,
  and an event of any other version is not;
- a cancel that comes before the watch shows the Phase just created cancels that Phase,
  and the Execution runs until it ends (as if there were none, it ended cancelled at once
  and left the Phase running);
- the Execution's end is told by an Event, its start is not (its first Phase's tells it);
- reconciles of one Execution that come while another waits for the lock are not queued
  behind it (the waiting one reads the state when it starts): four at once are two
  reconciles, and the second still sees what changed meanwhile;
- a Phase's event that moved only its runner's checkpoints (its log read, its run's facts)
  is known as changing nothing the Execution reads, and the Execution's plan indeed never
  sees them: the same Phase with or without them gives the same status write;
- a write's answer is kept, without its managedFields, only until the watch shows that
  version or a later one, and nothing is kept for an Execution the watch saw deleted.
"""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.contract.phase import phase_status
from agentjobs.controllers.execution import executions
from agentjobs.controllers.execution.executions import ExecutionReconciler
from agentjobs.controllers.execution.queue_admission import QueueAdmission
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime import events
from agentjobs.runtime.observed import Observed, by_name
from tests.memory_kube import MemoryKube

NAMESPACE, NAME, UID = "team", "fix", "uid-1"
KEY = by_name(NAMESPACE, NAME)  # the Execution's key in the watched index


def _execution(version: str) -> dict[str, Any]:
    phase = {"name": "run", "image": "busybox", "prompt": "go"}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {
            "namespace": NAMESPACE,
            "name": NAME,
            "uid": UID,
            "generation": 1,
            "resourceVersion": version,
        },
        "spec": {"phases": [phase]},
    }


@pytest.fixture(autouse=True)
def no_event_posting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "post", lambda *args, **kwargs: None)


def _phase(execution: dict[str, Any]) -> dict[str, Any]:
    """The Execution's first Phase as the watch shows it once created (no status yet)."""
    spec = ExecutionSpec.model_validate(execution["spec"])
    phase = phase_status.phase_spec(spec, execution_name=NAME, index=0, inputs=None)
    owner = {"uid": UID, "controller": True, "kind": "Execution", "name": NAME}
    return {
        "metadata": {
            "namespace": NAMESPACE,
            "name": f"{NAME}-0-run",
            "uid": f"uid-{NAME}-0-run",  # as MemoryKube makes it
            "ownerReferences": [owner],
        },
        "spec": phase.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def _kube(execution: dict[str, Any]) -> MemoryKube:
    """The API server holding ``execution`` (the watch shows it too)."""
    kube = MemoryKube()
    kube.put(paths.execution(NAMESPACE, NAME), copy.deepcopy(execution))
    return kube


def _reconciler(
    kube: MemoryKube, executions: dict[Any, list[Any]], phases: dict[str, list[Any]]
) -> ExecutionReconciler:
    observed = Observed(executions, phases, {})
    admission = QueueAdmission(observed)
    return ExecutionReconciler(kube, None, None, observed, admission)  # type: ignore[arg-type]


STATUS = f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/executions/{NAME}/status"


def test_a_reconcile_that_creates_a_phase_writes_the_status_and_its_event_changes_nothing() -> None:
    execution = _execution("10")
    kube = _kube(execution)
    reconciler = _reconciler(kube, {KEY: [execution]}, {})

    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))

    phases = f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/phases"
    assert kube.requests == [("POST", phases), ("PATCH", STATUS)]
    assert kube.patches[-1]["status"]["phases"] == [  # R77: listed running from its creation
        {"name": "run", "status": "running", "deliverableRecovered": False}
    ]
    written = kube.objects[paths.execution(NAMESPACE, NAME)]["metadata"]["resourceVersion"]
    assert reconciler.echoes_own_write(NAMESPACE, NAME, written)  # its event reconciles nothing
    shown = copy.deepcopy(kube.objects[f"{phases}/{NAME}-0-run"])  # the Phase's own event
    assert not reconciler.phase_changed(shown)
    started = {
        "status": "running",
        "podName": f"{NAME}-0-run-1",
        "attempt": 1,
        "startedAt": "2026-12-05T12:00:00Z",
        "observedGeneration": 1,
        "conditions": [{"type": "Ready", "status": "False", "reason": "Running"}],
    }
    assert not reconciler.phase_changed({**shown, "status": started})  # R77: no write for it
    assert reconciler.phase_changed({**shown, "status": {**started, "status": "completed"}})


def test_the_event_of_its_own_last_write_is_known_once_and_no_other() -> None:
    execution = _execution("10")
    kube = _kube(execution)
    reconciler = _reconciler(kube, {KEY: [execution]}, {UID: [_phase(execution)]})

    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))
    written = kube.objects[paths.execution(NAMESPACE, NAME)]["metadata"]["resourceVersion"]

    assert kube.requests == [("PATCH", STATUS)]
    assert not reconciler.echoes_own_write(NAMESPACE, NAME, "10")
    assert not reconciler.echoes_own_write(NAMESPACE, "other", written)
    assert reconciler.echoes_own_write(NAMESPACE, NAME, written)
    assert not reconciler.echoes_own_write(NAMESPACE, NAME, written)  # an echo comes once


def test_reconciles_that_come_while_one_waits_are_not_queued_behind_it() -> None:
    kube = _kube(_execution("10"))
    executions: dict[Any, list[Any]] = {KEY: [_execution("10")]}
    reconciler = _reconciler(kube, executions, {})
    reads: list[str] = []
    original = reconciler._reconcile

    async def counted(namespace: str, name: str) -> None:
        reads.append(executions[by_name(namespace, name)][0]["metadata"]["resourceVersion"])
        await asyncio.sleep(0.05)  # long enough for the others to come meanwhile
        await original(namespace, name)

    reconciler._reconcile = counted  # type: ignore[method-assign]

    async def scenario() -> None:
        first = asyncio.create_task(reconciler.reconcile(NAMESPACE, NAME))
        await asyncio.sleep(0.01)  # the first holds the lock
        executions[KEY] = [_execution("20")]  # what the later events bring
        others = [reconciler.reconcile(NAMESPACE, NAME) for _ in range(3)]
        await asyncio.gather(first, *others)

    asyncio.run(scenario())

    assert reads == ["10", "20"]


def test_a_cancel_before_the_watch_shows_the_new_phase_cancels_that_phase() -> None:
    execution = _execution("10")
    kube = _kube(execution)
    executions: dict[Any, list[Any]] = {KEY: [execution]}
    reconciler = _reconciler(kube, executions, {})
    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))  # creates the Phase
    requests, patches = len(kube.requests), len(kube.patches)
    cancelled = copy.deepcopy(execution)
    cancelled["spec"]["cancel"] = True
    cancelled["metadata"]["resourceVersion"] = "30"
    executions[KEY] = [cancelled]  # the watch shows the cancel, not the Phase

    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))

    phase = f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/phases/{NAME}-0-run"
    assert kube.requests[requests] == ("PATCH", phase)
    assert kube.patches[patches] == {"spec": {"cancel": True}}
    assert kube.patches[-1]["status"]["status"] == "running"


def test_a_phase_made_here_and_deleted_unseen_is_no_longer_counted() -> None:
    execution = _execution("10")
    kube = _kube(execution)
    reconciler = _reconciler(kube, {KEY: [execution]}, {})
    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))  # creates the Phase
    reconciler.phase_deleted(f"uid-{NAME}-0-run")
    del kube.objects[f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/phases/{NAME}-0-run"]
    requests = len(kube.requests)

    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))

    assert kube.requests[requests] == (
        "POST",
        f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/phases",
    )


def test_the_execution_tells_its_end_by_an_event_and_leaves_its_start_to_the_phase(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    posted: list[str] = []
    monkeypatch.setattr(events, "post", lambda *args, reason, **kwargs: posted.append(reason))
    execution = _execution("10")
    kube = _kube(execution)
    phase = _phase(execution)
    phases = {UID: [{**phase, "status": {"status": "running", "podName": "fix-0-run-a1"}}]}
    reconciler = _reconciler(kube, {KEY: [execution]}, phases)
    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))
    assert kube.patches[-1]["status"]["status"] == "running" and posted == []

    ended = {"status": "completed", "finishedAt": "2026-12-05T10:00:00Z"}
    phases[UID] = [{**phase, "status": {**phases[UID][0]["status"], **ended}}]
    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))

    assert kube.patches[-1]["status"]["status"] == "completed"
    assert posted == ["Complete"]


def _running_phase(execution: dict[str, Any], **checkpoints: Any) -> dict[str, Any]:
    phase = _phase(execution)
    phase["metadata"]["resourceVersion"] = str(20 + len(checkpoints))
    phase["status"] = {"status": "running", "podName": f"{NAME}-0-run-a1", **checkpoints}
    return phase


LOG = {"bytesRead": 160, "sha256": "0" * 64}
RUN = {
    "exitCode": 0,
    "streamIntact": True,
    "report": {"state": "success", "success": True, "sideEffects": "none", "comments": "done"},
    "transcriptBytes": 160,
    "transcriptSha256": "0" * 64,
}


def test_a_phase_event_that_moved_only_its_runners_checkpoints_changes_nothing_read() -> None:
    execution = _execution("10")
    reconciler = _reconciler(_kube(execution), {KEY: [execution]}, {})
    running = _running_phase(execution)

    assert reconciler.phase_changed(running)  # its first event
    assert not reconciler.phase_changed(_running_phase(execution, log=LOG))
    assert not reconciler.phase_changed(_running_phase(execution, log=LOG, run=RUN))
    ended = _running_phase(execution, log=LOG, run=RUN)
    ended["status"]["status"] = "completed"
    assert reconciler.phase_changed(ended)
    cancelled = copy.deepcopy(ended)
    cancelled["spec"]["cancel"] = True
    assert reconciler.phase_changed(cancelled)

    reconciler.phase_deleted(running["metadata"]["uid"])
    assert reconciler.phase_changed(cancelled)  # forgotten with its deletion


class _FixedClock(datetime):
    @classmethod
    def now(cls, tz: Any = None) -> _FixedClock:
        return cls(2026, 12, 5, 12, 0, tzinfo=UTC)


def test_the_execution_writes_the_same_status_with_or_without_the_checkpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(executions, "datetime", _FixedClock)  # the same "now" for both
    execution = _execution("10")
    written = []
    for phase in (_running_phase(execution), _running_phase(execution, log=LOG, run=RUN)):
        kube = _kube(execution)
        reconciler = _reconciler(kube, {KEY: [execution]}, {UID: [phase]})
        asyncio.run(reconciler.reconcile(NAMESPACE, NAME))
        assert kube.requests == [("PATCH", STATUS)]
        written.append(kube.patches[-1])
    assert written[0] == written[1]
    assert written[0]["status"]["phases"][0]["status"] == "running"


def test_a_writes_answer_is_kept_only_until_the_watch_shows_it() -> None:
    execution = _execution("10")
    execution["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {}}]
    kube = _kube(execution)
    reconciler = _reconciler(kube, {KEY: [execution]}, {UID: [_phase(execution)]})
    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))
    answer = kube.objects[paths.execution(NAMESPACE, NAME)]
    assert "managedFields" in answer["metadata"]  # as the API server answered
    kept = reconciler._written[NAMESPACE, NAME]
    assert "managedFields" not in kept["metadata"]

    older = copy.deepcopy(answer)
    older["metadata"]["resourceVersion"] = str(int(answer["metadata"]["resourceVersion"]) - 1)
    reconciler.watch_shows(older)  # the answer is still the later one
    assert reconciler._written[NAMESPACE, NAME] is kept
    reconciler.watch_shows(copy.deepcopy(answer))
    assert (NAMESPACE, NAME) not in reconciler._written

    asyncio.run(reconciler.reconcile(NAMESPACE, NAME))  # keeps a lock, maybe an echo
    reconciler.execution_deleted(NAMESPACE, NAME)
    assert (NAMESPACE, NAME) not in reconciler._written
    assert (NAMESPACE, NAME) not in reconciler._echoes
    assert (NAMESPACE, NAME) not in reconciler._locks
