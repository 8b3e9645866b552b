"""The outcome API's rules, enforced by the real API server (R37, R43, R44).

Cases: an Execution whose outcome names both or neither of rubric and
rubricFrom, a maxIterations outside 1-20, a grader with neither image nor
command, or no grader, is refused with its own message, on a phase and in
defaults, and nothing is created; a valid outcome is accepted as written;
an interrupt can be set but never taken back; a Phase's `status.outcome`
is accepted by the schema and its result shows in the OUTCOME column, as
the Execution's does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from devcluster.testing import Kubectl

RUBRIC = "## Coverage\n- every merged change is listed\n"
GRADER = {"command": ["grade"]}


def execution(name: str, outcome: dict[str, Any] | None, *, on_defaults: bool = False) -> Any:
    phase: dict[str, Any] = {"name": "draft", "prompt": "Write the notes."}
    defaults: dict[str, Any] = {"image": "busybox:1.36"}
    if outcome is not None:
        (defaults if on_defaults else phase)["outcome"] = outcome
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {"defaults": defaults, "phases": [phase]},
    }


def apply(kubectl: Kubectl, namespace: str, manifest: Any) -> Any:
    return kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(manifest), check=False)


@pytest.mark.parametrize("on_defaults", [False, True], ids=["phase", "defaults"])
@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        (
            {
                "rubric": RUBRIC,
                "rubricFrom": {"configMapKeyRef": {"name": "r", "key": "k"}},
                "grader": GRADER,
            },
            "set exactly one of outcome.rubric (inline markdown) and outcome.rubricFrom",
        ),
        ({"description": "notes", "grader": GRADER}, "an outcome needs its rubric"),
        ({"rubric": RUBRIC, "maxIterations": 0, "grader": GRADER}, "maxIterations must be from 1"),
        ({"rubric": RUBRIC, "maxIterations": 21, "grader": GRADER}, "maxIterations must be from 1"),
        ({"rubric": RUBRIC, "grader": {"args": ["-v"]}}, "it needs a command: set grader.command"),
        ({"rubric": RUBRIC}, "grader: Required value"),
        ({"rubric": RUBRIC, "grader": GRADER, "maxIterations": "3"}, "must be of type integer"),
        ({"rubric": RUBRIC, "grader": {"image": "g:1", "shell": "sh"}}, 'unknown field "spec.'),
    ],
    ids=[
        "both-rubrics",
        "no-rubric",
        "zero-iterations",
        "21-iterations",
        "grader-without-command",
        "no-grader",
        "iterations-as-string",
        "unknown-grader-field",
    ],
)
def test_r37_a_wrong_outcome_is_refused_with_a_message_that_says_what_to_fix(
    kubectl: Kubectl,
    namespace: str,
    crds: None,
    outcome: dict[str, Any],
    message: str,
    on_defaults: bool,
) -> None:
    result = apply(kubectl, namespace, execution("wrong", outcome, on_defaults=on_defaults))
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert kubectl.json("get", "executions", "-n", namespace)["items"] == []


def test_r37_a_valid_outcome_is_stored_as_written(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    outcome = {
        "description": "A release-notes page",
        "rubricFrom": {"configMapKeyRef": {"name": "rubrics", "key": "notes.md"}},
        "maxIterations": 20,
        "grader": {
            "image": "ghcr.io/example/grader:1",
            "command": ["grade"],
            "args": ["--strict"],
            "env": [{"name": "MODE", "value": "strict"}],
            "resources": {"limits": {"memory": "256Mi"}},
            "transcriptFormat": "claude-code",
        },
    }
    result = apply(kubectl, namespace, execution("valid", outcome))
    assert result.returncode == 0, result.stderr
    stored = kubectl.json("get", "execution", "valid", "-n", namespace)
    assert stored["spec"]["phases"][0]["outcome"] == outcome


def test_r44_an_interrupt_can_be_set_but_never_taken_back(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("stop", None)).returncode == 0

    def patch(body: str) -> Any:
        return kubectl.run(
            "patch", "execution", "stop", "-n", namespace, "--type=merge", "-p", body, check=False
        )

    assert patch('{"spec": {"interrupt": true}}').returncode == 0
    for body in ('{"spec": {"interrupt": false}}', '{"spec": {"interrupt": null}}'):
        result = patch(body)
        assert result.returncode != 0
        assert "an interrupt cannot be taken back" in result.stderr, result.stderr
    stored = kubectl.json("get", "execution", "stop", "-n", namespace)
    assert stored["spec"]["interrupt"] is True


def test_r43_the_phase_and_execution_show_their_outcome_in_a_column(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("shown", None)).returncode == 0
    phase = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "shown-0-draft"},
        "spec": {"executionName": "shown", "index": 0, "name": "draft", "prompt": "p"},
    }
    assert apply(kubectl, namespace, phase).returncode == 0
    evaluation = {
        "iteration": 0,
        "result": "needs_revision",
        "explanation": "One link is dead.",
        "criteria": [{"name": "links", "met": False, "feedback": "fix #12"}],
        "usage": {"inputTokens": 2400, "outputTokens": 350},
        "graderPod": "shown-0-draft-g0",
        "startedAt": "2026-12-01T12:00:00Z",
        "finishedAt": "2026-12-01T12:01:00Z",
    }
    phase_status = {
        "status": {
            "status": "running",
            "outcome": {
                "result": "needs_revision",
                "evaluations": [evaluation, {"iteration": 1, "graderPod": "shown-0-draft-g1"}],
                "usage": {"inputTokens": 2400, "outputTokens": 350},
            },
        }
    }
    execution_status = {
        "status": {
            "status": "running",
            "outcome": "needs_revision",
            "phases": [{"name": "draft", "status": "running", "outcome": "needs_revision"}],
        }
    }
    for kind, name, body in (
        ("phase", "shown-0-draft", phase_status),
        ("execution", "shown", execution_status),
    ):
        kubectl.run(
            "patch",
            kind,
            name,
            "-n",
            namespace,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps(body),
        )
    stored = kubectl.json("get", "phase", "shown-0-draft", "-n", namespace)["status"]["outcome"]
    assert stored["evaluations"][0] == evaluation  # nothing pruned
    for kind, name in (("phase", "shown-0-draft"), ("execution", "shown")):
        header, row = kubectl.run("get", kind, name, "-n", namespace).stdout.splitlines()[:2]
        start = header.index("OUTCOME")  # columns are aligned; empty cells have no text
        assert row[start:].split()[0] == "needs_revision"


def test_r41_outcome_not_met_is_a_classification_the_api_server_accepts(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("unmet", None)).returncode == 0
    body = {"status": {"status": "failed", "failureClassification": "outcome_not_met"}}
    result = kubectl.run(
        "patch",
        "execution",
        "unmet",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps(body),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    status = kubectl.json("get", "execution", "unmet", "-n", namespace)["status"]
    assert status["failureClassification"] == "outcome_not_met"
