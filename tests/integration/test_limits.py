"""Live limits on the local cluster's real node (R67, R70): agents that print a real CLI's
transcript shape slowly, one event a second, stopped by what they spent.

Cases: a Claude Code-shaped phase with maxCostUsd (priced from the operator's price table)
is stopped within 2 s of the event that passed it (the operator tells the timekeeper within
milliseconds; the kubelet's kill after the failed probe is most of it), ends `failed`
with its outcome `blocked` by a recoverable `budget` blocker that needs the user (terminal
reason BudgetExceeded), and the file it wrote before is kept; a phase silent for its
idleSeconds ends Stuck long before its timeoutSeconds; maxTurns ends MaxTurns at the turn
after the last one allowed; each stop is announced with an Event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    running,
    wait_finished,
)

# Alone on the cluster (make test's second lane): it measures how soon a limit stops the agent.
pytestmark = pytest.mark.exclusive

MODEL = "claude-test-1"
# A message of 1,000 input and 100 output tokens costs $0.002 at these prices.
PRICES = f"models:\n  {MODEL}: {{input: '1', output: '10'}}\n"


def claude_agent(*, messages: int = 30) -> str:
    """A Claude Code-shaped agent: one assistant message a second, each carrying the
    time it was printed (the node's uptime); SIGTERM is answered at once, saying when."""
    message = (
        '{"type":"assistant","message":{"id":"msg_%s","model":"' + MODEL + '",'
        '"content":[{"type":"text","text":"step %s"}],'
        '"usage":{"input_tokens":1000,"output_tokens":100}},"at":%s}\\n'
    )
    return (
        'echo work > "$AGENTJOBS_OUTPUT_DIR/notes.md"; '
        'trap \'printf "{\\"type\\":\\"system\\",\\"subtype\\":\\"stopped\\",'
        '\\"at\\":%s}\\n" $(cut -d" " -f1 /proc/uptime); exit 143\' TERM; '
        'echo \'{"type":"system","subtype":"init"}\'; '
        f"i=0; while [ $i -lt {messages} ]; do i=$((i+1)); "
        f"printf '{message}' $i $i $(cut -d' ' -f1 /proc/uptime); "
        "n=0; while [ $n -lt 10 ]; do n=$((n+1)); sleep 0.1; done; done; "
        'echo \'{"type":"result","subtype":"success","result":"done","usage":{}}\''
    )


def execution(name: str, script: str, limits: dict[str, Any], **phase: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "defaults": {"keepPods": True},
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Work.",
                    "transcriptFormat": "claude-code",
                    "command": ["sh", "-c", script],
                    "limits": limits,
                    **phase,
                }
            ],
        },
    }


@pytest.fixture
def priced_operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    table = tmp_path / "prices.yaml"
    table.write_text(PRICES)
    extra = [f"--price-table={table}"]
    yield from running(OperatorProcess(s3_env, namespace, tmp_path / "operator.log", extra))


def transcript(kubectl: Kubectl, namespace: str, pod: str) -> list[dict[str, Any]]:
    log = kubectl.run("logs", "-n", namespace, pod, "-c", "agent").stdout
    return [json.loads(line) for line in log.splitlines() if line.startswith("{")]


def events(kubectl: Kubectl, namespace: str, reason: str) -> list[str]:
    listed = kubectl.json("get", "events", "-n", namespace, "--field-selector", f"reason={reason}")
    return [item["message"] for item in listed["items"]]


def test_a_claude_code_phase_past_its_cost_limit_is_stopped_at_once_and_blocked(
    kubectl: Kubectl, namespace: str, priced_operator: OperatorProcess
) -> None:
    kubectl.apply(execution("spend", claude_agent(), {"maxCostUsd": "0.011"}), namespace)
    status = wait_finished(kubectl, namespace, "spend", timeout=90)
    assert status["status"] == "failed"
    phase = phase_status(kubectl, namespace, "spend-0-work")
    outcome = phase["taskOutcome"]
    assert (outcome["status"], outcome["terminalReason"]) == ("blocked", "BudgetExceeded")
    assert outcome["needsUserAction"] is True
    [blocker] = outcome["blockers"]
    assert (blocker["type"], blocker["recoverable"]) == ("budget", True)
    assert "maxCostUsd (0.011 USD)" in blocker["message"]
    # The sixth message takes the run to $0.012, once the kubelet probes the agent (a stop
    # in a run's first seconds waits for that, README R70).
    printed = transcript(kubectl, namespace, "spend-0-work-a1")
    messages = [e for e in printed if e["type"] == "assistant"]
    [stopped] = [e for e in printed if e.get("subtype") == "stopped"]
    latency = stopped["at"] - messages[5]["at"]
    print(f"spend: stopped {latency:.2f} s after the message that passed the limit")
    assert 6 <= len(messages) <= 8, f"{len(messages)} messages were printed"
    assert latency <= 2.0
    assert "notes.md" in {a["path"] for a in phase.get("artifacts", [])}  # its work is kept
    # What the whole attempt spent, its messages after the stop included.
    assert phase["limits"] == [
        {"limit": "maxCostUsd", "allowed": "0.011", "used": f"{0.002 * len(messages):g}"}
    ]
    assert any("maxCostUsd" in m for m in events(kubectl, namespace, "LimitExceeded"))
    assert any("80% of its maxCostUsd" in m for m in events(kubectl, namespace, "LimitApproaching"))
    # `kubectl get phases` shows what the phase cost.
    header, row = kubectl.run("get", "phase", "spend-0-work", "-n", namespace).stdout.splitlines()
    column = header.index("COST")  # the table's columns are aligned; some cells are empty
    cost = row[column : header.index("AGE")].strip()
    assert abs(float(cost) - 0.002 * len(messages)) < 1e-9, row


def test_a_silent_agent_is_stopped_as_stuck_long_before_its_timeout(
    kubectl: Kubectl, namespace: str, priced_operator: OperatorProcess
) -> None:
    silent = (
        "trap 'exit 143' TERM; "
        'echo \'{"type":"system","subtype":"init"}\'; '
        "while true; do sleep 0.1; done"
    )
    begun = time.monotonic()
    manifest = execution("quiet", silent, {"idleSeconds": 3}, timeoutSeconds=120)
    kubectl.apply(manifest, namespace)
    wait_finished(kubectl, namespace, "quiet", timeout=90)
    elapsed = time.monotonic() - begun
    print(f"quiet: ended {elapsed:.1f} s after its apply")
    assert elapsed < 40
    outcome = phase_status(kubectl, namespace, "quiet-0-work")["taskOutcome"]
    assert (outcome["status"], outcome["terminalReason"]) == ("failed", "Stuck")
    assert "idleSeconds (3 s)" in outcome["summary"]


def test_a_run_past_its_turns_ends_max_turns(
    kubectl: Kubectl, namespace: str, priced_operator: OperatorProcess
) -> None:
    kubectl.apply(execution("turns", claude_agent(), {"maxTurns": 2}), namespace)
    wait_finished(kubectl, namespace, "turns", timeout=90)
    phase = phase_status(kubectl, namespace, "turns-0-work")
    outcome = phase["taskOutcome"]
    assert (outcome["status"], outcome["terminalReason"]) == ("failed", "MaxTurns")
    printed = transcript(kubectl, namespace, "turns-0-work-a1")
    messages = [e for e in printed if e["type"] == "assistant"]
    assert 3 <= len(messages) <= 5, printed
    assert phase["usage"]["turns"] == len(messages)
