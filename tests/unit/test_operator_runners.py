"""Which Phases' runners start without reading their Phase again (no cluster: the
in-memory API of tests/memory_kube.py, which records every request).

Only a runner writes a Phase's status. A Phase this leader term created, whose event shows
no status and which no runner has driven yet, is as its event shows it: its runner starts
from that event. Any other Phase's runner reads the Phase first: one of an earlier term, or
whose event shows a status, may have been written since that event.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.controllers.operator import Operator
from agentjobs.runtime import events
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.observed import Observed, by_name
from tests.memory_kube import MemoryKube

NAMESPACE, NAME = "team", "fix"
PHASE = paths.phase(NAMESPACE, f"{NAME}-0-run")


@pytest.fixture(autouse=True)
def no_event_posting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "post", lambda *args, **kwargs: None)


def _cluster() -> tuple[MemoryKube, Operator]:
    """An Execution of one phase, in the API server and in the watch's index."""
    kube = MemoryKube()
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"namespace": NAMESPACE, "name": NAME, "generation": 1},
        "spec": {"phases": [{"name": "run", "image": "busybox", "prompt": "go"}]},
    }
    stored = kube.put(paths.execution(NAMESPACE, NAME), execution)
    observed = Observed({by_name(NAMESPACE, NAME): [stored]}, {}, {})
    return kube, Operator(kube, OperatorConfig(), None, observed)  # type: ignore[arg-type]


async def _runner_started(kube: MemoryKube, operator: Operator, phase: dict[str, Any]) -> None:
    """Show ``phase``'s event to the operator and let its runner go as far as its pod."""
    operator.phase_seen(NAMESPACE, phase["metadata"]["name"], copy.deepcopy(phase))
    for _ in range(500):
        if ("POST", paths.pod(NAMESPACE)) in kube.requests:
            break
        await asyncio.sleep(0.01)
    await asyncio.gather(*operator._stop_acting("the test ends"), return_exceptions=True)


def test_a_phase_this_term_created_starts_its_runner_from_its_event() -> None:
    async def main() -> None:
        kube, operator = _cluster()
        await operator.executions.reconcile(NAMESPACE, NAME)
        await _runner_started(kube, operator, kube.objects[PHASE])
        assert ("POST", paths.pod(NAMESPACE)) in kube.requests
        assert ("GET", PHASE) not in kube.requests

    asyncio.run(main())


def test_a_phase_of_an_earlier_term_is_read_before_its_runner_starts() -> None:
    async def main() -> None:
        kube, operator = _cluster()
        await operator.executions.reconcile(NAMESPACE, NAME)
        phase = copy.deepcopy(kube.objects[PHASE])
        operator._stop_acting("leadership lost")  # the next term starts
        await _runner_started(kube, operator, phase)
        assert ("GET", PHASE) in kube.requests

    asyncio.run(main())


def test_a_phase_whose_event_shows_a_status_is_read_before_its_runner_starts() -> None:
    async def main() -> None:
        kube, operator = _cluster()
        await operator.executions.reconcile(NAMESPACE, NAME)
        phase = copy.deepcopy(kube.objects[PHASE])
        phase["status"] = {"status": "running", "attempt": 1}
        await _runner_started(kube, operator, phase)
        assert ("GET", PHASE) in kube.requests

    asyncio.run(main())
