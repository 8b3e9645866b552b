"""What an Execution reads of one of its Phases: everything but its runner's checkpoints.

A Phase's runner records how far it has read the agent's log (``status.log``) and the
run's facts (``status.run``) so that it can go on after a restart (R14). Its Execution
never reads them: its plan is given the view below, so a Phase event that changed only
those checkpoints cannot change the Execution's plan, and needs no reconcile of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RUNNER_CHECKPOINTS = frozenset({"log", "run"})
# Changed by every write; they say nothing about the Phase itself.
WRITE_MARKS = frozenset({"resourceVersion", "managedFields"})


def status_view(phase: Mapping[str, Any]) -> dict[str, Any]:
    """The Phase's status without its runner's checkpoints."""
    status = phase.get("status") or {}
    return {key: value for key, value in status.items() if key not in RUNNER_CHECKPOINTS}


def execution_view(phase: Mapping[str, Any]) -> dict[str, Any]:
    """The Phase as its Execution reads it: equal views give equal plans."""
    meta = phase["metadata"]
    return {
        "metadata": {key: value for key, value in meta.items() if key not in WRITE_MARKS},
        "spec": phase.get("spec"),
        "status": status_view(phase),
    }
