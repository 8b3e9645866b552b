"""An Execution's limits over all its runs (R71), on the local cluster's real node.

Cases: a first phase whose agent (Claude Code-shaped) and grader together use all of the
Execution's maxTokens completes, and the second phase is never created: the Execution ends
`failed`, blocked by budget, naming it (without the grader's tokens there would be some
left); a second phase whose first message takes the runs together past the Execution's
maxTokens is stopped then, long before its agent would end, and fails naming the
Execution's limit; an attempt that crashed having used all of the Execution's maxTokens is not
retried, though its retry policy asks for it: the retry is not started, naming it.
"""

from __future__ import annotations

from typing import Any

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, phase_status, wait_finished

USAGE = '"usage":{"input_tokens":1000,"output_tokens":100}'
MESSAGE = (
    '{"type":"assistant","message":{"id":"msg_%s","model":"m",'
    '"content":[{"type":"text","text":"step"}],' + USAGE + "}}"
)
# 1,100 tokens: one message, then the result that totals it.
AGENT = (
    'echo work > "$AGENTJOBS_OUTPUT_DIR/notes.md"\n'
    'echo \'{"type":"system","subtype":"init"}\'\n'
    f"printf '{MESSAGE}\\n' 1\n"
    f'echo \'{{"type":"result","subtype":"success","result":"done",{USAGE}}}\'\n'
)
# A message of 1,100 tokens a second, for a minute.
SLOW_AGENT = (
    'echo work > "$AGENTJOBS_OUTPUT_DIR/notes.md"\n'
    "i=0; while [ $i -lt 60 ]; do i=$((i+1)); "
    f"printf '{MESSAGE}\\n' $i; sleep 1; done\n"
)
# Satisfied, having used 1,100 tokens.
GRADER = (
    'echo \'GRADE_RESULT: {"result": "satisfied", "explanation": "Fine.", '
    '"usage": {"input_tokens": 1000, "output_tokens": 100}}\'\n'
    "echo GRADE_RESULT_END\n"
)


def phase(name: str, script: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "image": BUSYBOX,
        "prompt": "Work.",
        "transcriptFormat": "claude-code",
        "command": ["sh", "-c", script],
        **extra,
    }


def test_a_grader_spending_the_last_tokens_leaves_the_next_phase_unstarted(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    outcome = {
        "rubric": "## Fine\n",
        "maxIterations": 1,
        "grader": {"command": ["sh", "-c"], "args": [GRADER], "transcriptFormat": "text"},
    }
    manifest = builders.execution(
        "spent",
        [phase("first", AGENT, outcome=outcome), phase("second", AGENT)],
        limits={"maxTokens": 2200},
    )
    kubectl.apply(manifest, namespace)
    status = wait_finished(kubectl, namespace, "spent", timeout=180)
    first = phase_status(kubectl, namespace, "spent-0-first")
    assert first["status"] == "completed"
    assert first["usage"]["inputTokens"] + first["usage"]["outputTokens"] == 2200
    assert (status["status"], status["currentPhase"]) == ("failed", "second")
    outcome_of = status["taskOutcome"]
    assert (outcome_of["status"], outcome_of["terminalReason"]) == ("blocked", "BudgetExceeded")
    (blocker,) = outcome_of["blockers"]
    assert blocker["type"] == "budget" and blocker["recoverable"] is True
    assert blocker["message"].startswith(
        "phase 'second' was not started: the execution's maxTokens"
    )
    assert status["limits"] == [{"limit": "maxTokens", "allowed": "2200", "used": "2200"}]
    phases = kubectl.json("get", "phases", "-n", namespace)["items"]
    assert [p["spec"]["name"] for p in phases] == ["first"]


def test_the_next_phase_is_stopped_when_the_runs_together_pass_the_limit(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    manifest = builders.execution(
        "passed",
        [phase("first", AGENT), phase("second", SLOW_AGENT, timeoutSeconds=120)],
        limits={"maxTokens": 1500},
    )
    kubectl.apply(manifest, namespace)
    status = wait_finished(kubectl, namespace, "passed", timeout=180)
    second = phase_status(kubectl, namespace, "passed-1-second")
    assert (status["status"], second["status"]) == ("failed", "failed")
    budget = kubectl.json("get", "phase", "passed-1-second", "-n", namespace)["spec"]["budget"]
    assert (budget["limits"], budget["usedBefore"]["tokens"]) == ({"maxTokens": 1500}, 1100)
    outcome_of = second["taskOutcome"]
    assert outcome_of["terminalReason"] == "BudgetExceeded"
    assert outcome_of["summary"] == (
        "the agent was stopped by the execution's maxTokens (1500 tokens): "
        "its runs had used 2200 tokens"
    )
    # Stopped at its first message, long before its minute was up.
    assert second["usage"]["inputTokens"] + second["usage"]["outputTokens"] < 1100 * 10


def test_a_retry_is_not_started_once_the_runs_used_up_a_limit(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    crashing = AGENT + "exit 1\n"
    retried = phase("only", crashing, retry={"limit": 2, "backoffSeconds": 0})
    manifest = builders.execution("crashed", [retried], limits={"maxTokens": 1100})
    kubectl.apply(manifest, namespace)
    status = wait_finished(kubectl, namespace, "crashed", timeout=180)
    only = phase_status(kubectl, namespace, "crashed-0-only")
    assert (status["status"], only["status"]) == ("failed", "failed")
    assert only["attempt"] == 2  # the retry was taken up, and refused before its pod
    outcome_of = only["taskOutcome"]
    assert (outcome_of["status"], outcome_of["terminalReason"]) == ("blocked", "BudgetExceeded")
    (blocker,) = outcome_of["blockers"]
    assert blocker["message"].startswith(
        "attempt 2 of phase 'only' was not started: the execution's maxTokens"
    )
    pods = kubectl.json("get", "pods", "-n", namespace)["items"]
    assert [p["metadata"]["name"] for p in pods if "-a2" in p["metadata"]["name"]] == []
