"""The Argo CD health check, run by a real Lua 5.1 on hand-written Executions and Phases.

Cases: no status yet, pending and running are Progressing; completed is Healthy; failed
and interrupted are Degraded, the failure's classification and the Finished condition's
message told; cancelled is Suspended; a spec change the operator has not yet seen (a
cancel) is Progressing whatever the status says; a status value it does not know is
Unknown; the argocd-cm patch installs this very script for both kinds.
(tests/integration/test_gitops_health.py runs it on objects the operator wrote.)
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.chart.argocd_health import HEALTH_CHECK, assess
from tests.chart.conftest import CHART


def execution(status: dict[str, Any] | None, *, generation: int = 1) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "fix", "namespace": "team-a", "generation": generation},
        "spec": {"phases": [{"name": "write", "prompt": "Write it."}]},
    }
    if status is not None:
        obj["status"] = {"observedGeneration": 1, **status}
    return obj


def finished(message: str) -> list[dict[str, str]]:
    return [{"type": "Finished", "status": "True", "reason": "Failed", "message": message}]


@pytest.mark.parametrize(
    ("status", "health"),
    [
        (None, "Progressing"),
        ({}, "Progressing"),
        ({"status": "pending"}, "Progressing"),
        ({"status": "running", "currentPhase": "write"}, "Progressing"),
        ({"status": "completed"}, "Healthy"),
        ({"status": "failed", "failureClassification": "platform"}, "Degraded"),
        ({"status": "interrupted"}, "Degraded"),
        ({"status": "cancelled"}, "Suspended"),
        ({"status": "resting"}, "Unknown"),
    ],
)
def test_each_status_has_its_health(status: dict[str, Any] | None, health: str) -> None:
    assert assess(execution(status))[0] == health


def test_a_running_execution_names_its_current_phase() -> None:
    assert assess(execution({"status": "running", "currentPhase": "write"})) == (
        "Progressing",
        "running, phase write",
    )


def test_a_failure_tells_its_classification_and_why() -> None:
    status = {
        "status": "failed",
        "failureClassification": "correct_refusal",
        "conditions": finished("phase write failed: the agent refused"),
    }
    assert assess(execution(status)) == (
        "Degraded",
        "failed (correct_refusal): phase write failed: the agent refused",
    )


def test_a_waiting_phase_tells_its_reconciling_condition() -> None:
    # As the operator writes a pending phase: only the true condition has the message.
    conditions = [
        {"type": "Running", "status": "False", "reason": "Pending", "message": ""},
        {"type": "Reconciling", "status": "True", "reason": "Pending", "message": "image pull"},
    ]
    phase = execution({"status": "pending", "conditions": conditions})
    phase["kind"] = "Phase"
    assert assess(phase) == ("Progressing", "pending: image pull")


def test_a_spec_change_not_yet_seen_is_progressing() -> None:
    status, message = assess(execution({"status": "completed"}, generation=2))
    assert (status, message) == ("Progressing", "Waiting for the operator to see generation 2")


def test_the_argocd_cm_patch_installs_this_script_for_both_kinds() -> None:
    patch = yaml.safe_load((CHART / "argocd" / "argocd-cm-patch.yaml").read_text())
    script = HEALTH_CHECK.read_text()
    assert patch == {
        "data": {
            "resource.customizations.health.agentjobs.io_Execution": script,
            "resource.customizations.health.agentjobs.io_Phase": script,
        }
    }
