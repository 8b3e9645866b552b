"""The limits API, enforced by the real API server (R67).

Cases: maxTurns on a phase whose transcript is text (set so, or by default), on the phase
or in defaults, is refused with a message that says what to do, and nothing is created;
with an event transcript (on the phase or in defaults) it is accepted; a cost that is not
a decimal and a zero limit are refused; limits are stored as written; a hand-made Phase
with maxTurns and a text transcript is refused.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from devcluster.testing import Kubectl

REFUSED = "limits.maxTurns needs an agent CLI's transcript"


def execution(
    name: str, phase: dict[str, Any], defaults: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "defaults": {"image": "busybox:1.36", **(defaults or {})},
            "phases": [{"name": "work", "prompt": "Work.", **phase}],
            **spec,
        },
    }


def apply(kubectl: Kubectl, namespace: str, manifest: Any) -> Any:
    return kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(manifest), check=False)


TURNS = {"limits": {"maxTurns": 5}}


@pytest.mark.parametrize(
    ("phase", "defaults", "message"),
    [
        (TURNS, None, REFUSED),
        ({**TURNS, "transcriptFormat": "text"}, None, REFUSED),
        ({}, TURNS, REFUSED),
        ({"transcriptFormat": "text"}, {**TURNS, "transcriptFormat": "claude-code"}, REFUSED),
        ({"limits": {"maxCostUsd": "-1"}}, None, "should match"),
        ({"limits": {"maxCostUsd": "ten"}}, None, "should match"),
        ({"limits": {"maxTokens": 0}}, None, "should be greater than or equal to 1"),
        ({"limits": {"idleSeconds": 0}}, None, "should be greater than or equal to 1"),
    ],
    ids=[
        "turns-default-text",
        "turns-text",
        "turns-in-defaults-text",
        "phase-text-over-defaults",
        "negative-cost",
        "cost-in-words",
        "zero-tokens",
        "zero-idle",
    ],
)
def test_r67_wrong_limits_are_refused_with_a_message(
    kubectl: Kubectl,
    namespace: str,
    crds: None,
    phase: dict[str, Any],
    defaults: dict[str, Any] | None,
    message: str,
) -> None:
    result = apply(kubectl, namespace, execution("wrong", phase, defaults))
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert kubectl.json("get", "executions", "-n", namespace)["items"] == []


@pytest.mark.parametrize(
    ("phase", "defaults"),
    [
        ({**TURNS, "transcriptFormat": "codex"}, None),
        (TURNS, {"transcriptFormat": "gemini-cli"}),
        ({"transcriptFormat": "opencode"}, TURNS),
    ],
    ids=["on-the-phase", "format-in-defaults", "turns-in-defaults"],
)
def test_r67_turns_with_an_event_transcript_are_accepted(
    kubectl: Kubectl,
    namespace: str,
    crds: None,
    phase: dict[str, Any],
    defaults: dict[str, Any] | None,
) -> None:
    result = apply(kubectl, namespace, execution("turns", phase, defaults))
    assert result.returncode == 0, result.stderr


def test_r67_limits_are_stored_as_written(kubectl: Kubectl, namespace: str, crds: None) -> None:
    phase = {"limits": {"maxCostUsd": "2.50", "maxTokens": 100000, "idleSeconds": 300}}
    assert apply(kubectl, namespace, execution("kept", phase)).returncode == 0
    stored = kubectl.json("get", "execution", "kept", "-n", namespace)["spec"]
    assert stored["phases"][0]["limits"] == phase["limits"]


def test_r67_a_hand_made_phase_with_turns_and_a_text_log_is_refused(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    phase = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "made-0-work"},
        "spec": {
            "executionName": "made",
            "index": 0,
            "name": "work",
            "image": "busybox:1.36",
            "prompt": "Work.",
            "limits": {"maxTurns": 3},
        },
    }
    result = apply(kubectl, namespace, phase)
    assert result.returncode != 0
    assert REFUSED in result.stderr, result.stderr
