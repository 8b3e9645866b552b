"""What an Execution reads of its Phases (R77): an unended one's steps are not among it."""

from __future__ import annotations

from typing import Any

from agentjobs.contract.execution import phase_view

CREATED: dict[str, Any] = {
    "metadata": {"name": "ex-0-run", "uid": "p1", "resourceVersion": "5"},
    "spec": {"name": "run", "index": 0},
}
WAITING = {
    "status": "pending",
    "podName": "ex-0-run-1",
    "attempt": 1,
    "observedGeneration": 1,
    "conditions": [{"type": "Ready", "status": "False", "reason": "Unschedulable"}],
}
STARTED = {
    **WAITING,
    "status": "running",
    "startedAt": "2026-12-07T01:00:00Z",
    "conditions": [{"type": "Ready", "status": "False", "reason": "Running"}],
    "log": {"bytesRead": 120, "sha256": "ab"},
}


def _phase(status: dict[str, Any] | None, version: str = "6") -> dict[str, Any]:
    metadata = {**CREATED["metadata"], "resourceVersion": version}
    return {**CREATED, "metadata": metadata, **({"status": status} if status else {})}


def test_an_unended_phase_reads_running_from_its_creation_to_its_end() -> None:
    views = [
        phase_view.execution_view(_phase(status, version))
        for status, version in ((None, "5"), (WAITING, "6"), (STARTED, "7"))
    ]
    assert views[0] == views[1] == views[2]
    assert views[0]["status"] == {"status": "running"}


def test_what_the_plan_takes_of_an_unended_phase_is_still_read() -> None:
    spent = {**STARTED, "usage": {"costUsd": 1.5}}
    graded = {**STARTED, "outcome": {"result": "revise"}}
    started = phase_view.status_view(_phase(STARTED))
    assert phase_view.status_view(_phase(spent)) == {**started, "usage": {"costUsd": 1.5}}
    assert phase_view.status_view(_phase(graded)) != started


def test_an_ended_phase_is_read_whole_but_for_its_runners_checkpoints() -> None:
    ended = {
        **STARTED,
        "status": "failed",
        "exitCode": 1,
        "finishedAt": "2026-12-07T01:01:00Z",
        "run": {"exitCode": 1},
    }
    view = phase_view.status_view(_phase(ended))
    assert view == {key: value for key, value in ended.items() if key not in ("log", "run")}
