"""What an Execution reads of one of its Phases: how it ended, or that it has not (R77).

A Phase's runner records how far it has read the agent's log (``status.log``) and the
run's facts (``status.run``) so that it can go on after a restart (R14). Its Execution
never reads them: its plan is given the view below, so a Phase event that changed only
those checkpoints cannot change the Execution's plan, and needs no reconcile of it.

Nor does an Execution follow where an unended Phase is (R77): its pod made, waiting,
its agent started, the attempt it is on. It lists the phase ``running`` from its creation
to its end, as its own status is ``running`` from its start (R23), and reads of it only
what its plan takes from an unended phase (usage for the budget, R71; where repositories
stand, R63; a grader's result). The Phase's start is then no write of the Execution:
each status write costs the API server more than any other request the operator makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjobs.contract.phase.phase_status import TERMINAL
from agentjobs.models.contract import PhaseStatus

RUNNER_CHECKPOINTS = frozenset({"log", "run"})
# How an unended Phase's attempt goes on: the Phase's own status shows it.
ATTEMPT_PROGRESS = frozenset(
    {"podName", "attempt", "attempts", "startedAt", "observedGeneration", "conditions"}
)
UNENDED_LEFT_OUT = RUNNER_CHECKPOINTS | ATTEMPT_PROGRESS
# Changed by every write; they say nothing about the Phase itself.
WRITE_MARKS = frozenset({"resourceVersion", "managedFields"})


def status_view(phase: Mapping[str, Any]) -> dict[str, Any]:
    """The Phase's status as its Execution reads it: an ended one's whole but for its
    runner's checkpoints; an unended one's ``running``, without its attempt's progress."""
    status = phase.get("status") or {}
    if status.get("status") in TERMINAL:
        return {key: value for key, value in status.items() if key not in RUNNER_CHECKPOINTS}
    view = {key: value for key, value in status.items() if key not in UNENDED_LEFT_OUT}
    view["status"] = PhaseStatus.RUNNING.value
    return view


def execution_view(phase: Mapping[str, Any]) -> dict[str, Any]:
    """The Phase as its Execution reads it: equal views give equal plans."""
    meta = phase["metadata"]
    return {
        "metadata": {key: value for key, value in meta.items() if key not in WRITE_MARKS},
        "spec": phase.get("spec"),
        "status": status_view(phase),
    }
