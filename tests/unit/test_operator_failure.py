"""R55: an unexpected error ends the phase failed (platform) once; passing faults are retried.

Cases: a runner whose run raises an unexpected error is run once and given up once with
that error; an outage, a 5xx, a 409, a 429, a 403 and a wait are retried and the run goes
on; a 422 or a 413 refusal is not retried; a give-up that itself fails unexpectedly stops
the runner without running it again; a give-up that meets an outage is tried again, not
the run; the failed status names the error (cut, cleaned), is classified platform, keeps
the attempt's record and serialises.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import aiohttp
import pytest

from agentjobs.adapters.kube import ApiError
from agentjobs.contract.phase import operator_failure
from agentjobs.contract.text import agent_text
from agentjobs.controllers.phase import phase_runner
from agentjobs.models.contract import FailureClassification, PhaseStatus
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.runtime import backoff, errors


class Runner:
    """A runner whose run and give-up raise what they are told to, in order."""

    namespace = "ns"
    name = "phase"

    def __init__(self, runs: list[Exception | None], give_ups: list[Exception | None]) -> None:
        self._runs = runs
        self._give_ups = give_ups
        self.ran = 0
        self.given_up: list[Exception] = []

    async def run(self) -> None:
        self.ran += 1
        error = self._runs.pop(0)
        if error is not None:
            raise error

    async def give_up(self, error: Exception) -> None:
        self.given_up.append(error)
        failure = self._give_ups.pop(0)
        if failure is not None:
            raise failure


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backoff, "API", backoff.Backoff(first=0.001, cap=0.001))


def test_an_unexpected_error_is_run_once_and_given_up_once() -> None:
    error = TypeError("unhashable type: 'list'")
    runner = Runner([error], [None])
    asyncio.run(phase_runner.run_to_end(runner))
    assert runner.ran == 1
    assert runner.given_up == [error]


@pytest.mark.parametrize(
    "error",
    [
        aiohttp.ClientConnectionError("refused"),
        TimeoutError(),
        ApiError(0, "", "no answer"),
        ApiError(503, "Service Unavailable", ""),
        ApiError(409, "Conflict", ""),
        ApiError(429, "Too Many Requests", ""),
        ApiError(403, "Forbidden", "pods/log"),
        errors.RetryLater("an old pod is being removed"),
    ],
)
def test_a_passing_fault_is_retried_and_the_run_goes_on(error: Exception) -> None:
    runner = Runner([error, None], [])
    asyncio.run(phase_runner.run_to_end(runner))
    assert runner.ran == 2
    assert runner.given_up == []


@pytest.mark.parametrize("status", [400, 413, 422])
def test_a_refusal_is_not_retried(status: int) -> None:
    runner = Runner([ApiError(status, "Unprocessable", "too big"), None], [None])
    asyncio.run(phase_runner.run_to_end(runner))
    assert runner.ran == 1
    assert len(runner.given_up) == 1


def test_a_give_up_that_fails_unexpectedly_stops_the_runner() -> None:
    runner = Runner([ValueError("bug"), None], [KeyError("status")])
    asyncio.run(phase_runner.run_to_end(runner))
    assert runner.ran == 1
    assert len(runner.given_up) == 1


def test_a_give_up_that_meets_an_outage_is_tried_again_not_the_run() -> None:
    error = ValueError("bug")
    runner = Runner([error], [ApiError(503, "Service Unavailable", ""), None])
    asyncio.run(phase_runner.run_to_end(runner))
    assert runner.ran == 1
    assert runner.given_up == [error, error]


def test_the_failed_status_names_the_error_and_is_platform() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    previous = PhaseResourceStatus(status=PhaseStatus.RUNNING, attempt=1, pod_name="p-a1")
    error = UnicodeEncodeError("utf-8", "x\ud83d\x1b[2J" * 500, 1, 2, "surrogates not allowed")
    status = operator_failure.failed_status(
        previous, phase_name="p", error=error, generation=3, now=now
    )
    assert status.status is PhaseStatus.FAILED
    assert status.failure_classification is FailureClassification.PLATFORM
    assert status.observed_generation == 3
    assert status.pod_name == "p-a1"
    assert status.task_outcome is not None
    assert status.task_outcome.terminal_reason == operator_failure.CODE
    blockers = status.task_outcome.blockers or []
    assert blockers and blockers[0].message.startswith("the operator met an unexpected error: ")
    assert "UnicodeEncodeError" in blockers[0].message
    assert len(blockers[0].message.encode()) <= agent_text.SHORT_TEXT_BYTES
    assert "\x1b" not in status.model_dump_json()
    status.model_dump_json(by_alias=True).encode("utf-8")
