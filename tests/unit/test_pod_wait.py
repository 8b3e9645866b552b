"""Waiting for a pod's end with artifact storage: the harvester is shown only when slow.

Cases: a pod that ends within HARVEST_SHOWN_SECONDS of the wait costs no log read and no
status write; one that takes longer has its harvester's last line shown once, then again
only after a doubled interval.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import pytest

from agentjobs.controllers.phase import pod_wait
from agentjobs.controllers.phase.phase_context import PhaseContext

POD = "demo-0-fix-1"


class _Kube:
    def __init__(self) -> None:
        self.tails = 0

    async def log_tail(self, namespace: str, pod: str, container: str) -> str:
        self.tails += 1
        return "uploading report.md"


class _Context:
    """The parts of a PhaseContext ``wait_for_end`` uses; the pod ends at ``ends_after``."""

    def __init__(self, ends_after: float) -> None:
        self.namespace = "team"
        self.storage = object()
        self.kube = _Kube()
        self.shown: list[str] = []
        self._ends_at = time.monotonic() + ends_after

    async def current_pod(self, name: str) -> dict[str, Any]:
        phase = "Succeeded" if time.monotonic() >= self._ends_at else "Running"
        return {"metadata": {"name": name}, "status": {"phase": phase}}

    async def report_waiting(self, message: str) -> None:
        self.shown.append(message)

    async def wait(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _wait(ends_after: float) -> _Context:
    ctx = _Context(ends_after)
    pod = asyncio.run(pod_wait.wait_for_end(cast(PhaseContext, ctx), POD))
    assert pod is not None and pod["status"]["phase"] == "Succeeded"
    return ctx


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pod_wait, "RECHECK_SECONDS", 0.02)
    monkeypatch.setattr(pod_wait, "HARVEST_SHOWN_SECONDS", 0.3)


def test_a_pod_that_ends_soon_after_its_agent_costs_no_read_and_no_write() -> None:
    ctx = _wait(ends_after=0.15)
    assert (ctx.kube.tails, ctx.shown) == (0, [])


def test_a_slow_harvest_is_shown_once_then_after_a_doubled_interval() -> None:
    ctx = _wait(ends_after=0.8)  # shown at 0.3 s; next due at 0.9 s at the soonest
    assert ctx.kube.tails == 1
    assert ctx.shown == [f"{POD} has finished; waiting for the harvester: uploading report.md"]
