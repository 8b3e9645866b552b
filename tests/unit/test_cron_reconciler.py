"""The CronExecution reconciler against the in-memory API of tests/memory_kube.py, with the
watches as the test sets them.

Case: a run made a moment ago that the watch does not show yet still counts: under
``Forbid`` the next scheduled time waits for it, and no second run is made beside it; once
the watch shows the run's deletion without ever having shown the run, it counts no more.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.controllers.scheduling.cron_executions import CronReconciler
from agentjobs.runtime import events
from agentjobs.runtime.observed import Observed
from tests.memory_kube import MemoryKube

NAMESPACE, NAME, UID = "team", "nightly", "uid-cron"
EXECUTIONS = f"/apis/agentjobs.io/v1alpha1/namespaces/{NAMESPACE}/executions"


@dataclass
class Clock:
    moment: datetime

    def now(self) -> datetime:
        return self.moment

    def seconds_until(self, moment: datetime) -> float:
        return max((moment - self.moment).total_seconds(), 0.0)


@pytest.fixture(autouse=True)
def no_event_posting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "post", lambda *args, **kwargs: None)


def _cron() -> dict[str, Any]:
    phase = {"name": "work", "image": "busybox", "prompt": "Do it."}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "CronExecution",
        "metadata": {
            "namespace": NAMESPACE,
            "name": NAME,
            "uid": UID,
            "generation": 1,
            "resourceVersion": "1",
            "creationTimestamp": "2026-12-05T09:00:30Z",
        },
        "spec": {
            "schedule": "* * * * *",
            "concurrencyPolicy": "Forbid",
            "executionTemplate": {"spec": {"phases": [phase]}},
        },
    }


def _made(kube: MemoryKube) -> list[str]:
    return sorted(path for path in kube.objects if path.startswith(f"{EXECUTIONS}/"))


def test_a_run_the_watch_does_not_show_yet_still_holds_the_next_under_forbid() -> None:
    kube = MemoryKube()
    cron = _cron()
    kube.put(paths.cron_execution(NAMESPACE, NAME), cron)
    clock = Clock(datetime(2026, 12, 5, 9, 1, 1, tzinfo=UTC))
    # The watch shows the CronExecution and none of its runs.
    observed = Observed({}, {}, {}, cron_executions={(NAMESPACE, NAME): [cron]})
    reconciler = CronReconciler(kube, observed, clock)  # type: ignore[arg-type]

    async def scenario() -> None:
        await reconciler.reconcile(NAMESPACE, NAME)
        assert len(_made(kube)) == 1  # the 09:01 run
        clock.moment += timedelta(minutes=1)  # 09:02 is due; the watch still shows no run
        await reconciler.reconcile(NAMESPACE, NAME)
        assert len(_made(kube)) == 1
        first = kube.objects[_made(kube)[0]]
        reconciler.run_deleted(first["metadata"]["uid"])  # gone before the watch showed it
        del kube.objects[_made(kube)[0]]
        await reconciler.reconcile(NAMESPACE, NAME)
        assert len(_made(kube)) == 1 and kube.objects[_made(kube)[0]] is not first
        reconciler.stop()
        await asyncio.sleep(0)  # the cancelled wake-up ends

    asyncio.run(scenario())
