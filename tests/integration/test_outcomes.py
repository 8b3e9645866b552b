"""The outcome loop on the local cluster (R37-R44): busybox shell agents and graders.

Cases: an agent that passes only after the grader's feedback (evaluations
[needs_revision, satisfied], two agent and two grader pods, the Events with an
Ongoing one for a grader running over 30 s, the second agent seeing the
feedback file and its previous files); an agent that never satisfies the rubric
(max_iterations_reached, outcome_not_met, partial_success with the unmet
criteria as blockers, its last files kept); graders that exit 1, print an
unreadable block or none (failed); an interrupt while a grader runs
(interrupted, work partial), also across an operator restart; a failed agent
attempt is never graded.
"""

from __future__ import annotations

import json
import time
from typing import Any

from devcluster.testing import Kubectl
from tests import builders
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
    wait_for,
)

# The agent writes a draft; once it has the grader's feedback (R42) it fixes it, and prints
# what it was given so the test can read it from the pod's log.
AGENT = r"""
out=$AGENTJOBS_OUTPUT_DIR
if [ -f /workspace/artifacts/feedback/evaluation-0.json ]; then
  echo "feedback: $(cat /workspace/artifacts/feedback/evaluation-0.json | tr -d '\n')"
  echo "previous: $(cd /workspace/artifacts/previous && find . -type f | sort | tr '\n' ' ')"
  echo "previous draft: $(cat /workspace/artifacts/previous/report.md)"
  grep -q '^## Revision' "$AGENTJOBS_PROMPT_FILE" && echo "prompt has the revision section"
  echo "FIXED report" > "$out/report.md"
else
  echo "draft report" > "$out/report.md"
fi
echo 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "report written"}'
echo TASK_RESULT_END
"""

# Satisfied when the report says FIXED; otherwise asks for it (after ``SLOW`` seconds). It
# checks first that it has the rubric and the description, and not the agent's prompt (R38).
GRADER = r"""
grep -q FIXED "$AGENTJOBS_RUBRIC_FILE" || { echo "no rubric"; exit 3; }
grep -q "A fixed report" "$AGENTJOBS_PROMPT_FILE" || { echo "no description"; exit 4; }
! grep -q "Write the report" "$AGENTJOBS_PROMPT_FILE" || { echo "the agent's prompt"; exit 5; }
if grep -q FIXED /workspace/artifacts/input/report.md; then
  echo 'GRADE_RESULT: {"result": "satisfied", "explanation": "The report is fixed.",'
  echo '  "criteria": [{"name": "fixed", "met": true}], "usage": {"input_tokens": 5}}'
else
  sleep SLOW
  echo 'GRADE_RESULT: {"result": "needs_revision", "explanation": "Not fixed yet.",'
  echo '  "criteria": [{"name": "fixed", "met": false, "feedback": "write FIXED"}]}'
fi
echo GRADE_RESULT_END
"""

RUBRIC = "## Fixed\n- the report says `FIXED`\n"


def execution(
    name: str, agent: str, grader: str, *, max_iterations: int = 3, **outcome: Any
) -> dict[str, Any]:
    phase = {
        "name": "write",
        "image": BUSYBOX,
        "command": ["sh", "-c"],
        "args": [agent],
        "prompt": "Write the report.",
        "outcome": {
            "description": "A fixed report",
            "rubric": RUBRIC,
            "maxIterations": max_iterations,
            "grader": {"command": ["sh", "-c"], "args": [grader]},
            **outcome,
        },
    }
    # keepPods: the tests read the pods after the end
    return builders.execution(name, [phase], defaults={"keepPods": True})


def events(kubectl: Kubectl, namespace: str, phase: str) -> list[Any]:
    items = kubectl.json("get", "events", "-n", namespace)["items"]
    return [e for e in items if e["involvedObject"].get("name") == phase]


def reasons(kubectl: Kubectl, namespace: str, phase: str) -> list[str]:
    found = events(kubectl, namespace, phase)
    return [e["reason"] for e in found for _ in range(e.get("count") or 1)]


def pod_names(kubectl: Kubectl, namespace: str) -> set[str]:
    return {p["metadata"]["name"] for p in kubectl.json("get", "pods", "-n", namespace)["items"]}


def results(status: dict[str, Any]) -> list[str | None]:
    return [e.get("result") for e in status.get("outcome", {}).get("evaluations", [])]


def test_an_agent_that_passes_after_feedback_is_completed_by_its_second_evaluation(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("revise", AGENT, GRADER.replace("SLOW", "33")), namespace)
    status = wait_finished(kubectl, namespace, "revise", timeout=150)
    phase = phase_status(kubectl, namespace, "revise-0-write")
    assert (status["status"], phase["status"]) == ("completed", "completed")
    assert results(phase) == ["needs_revision", "satisfied"]
    assert phase["outcome"]["result"] == "satisfied"
    assert status["phases"][0]["outcome"] == status["outcome"] == "satisfied"
    first, second = phase["outcome"]["evaluations"]
    assert (first["iteration"], first["graderPod"]) == (0, "revise-0-write-g1")
    assert (second["iteration"], second["graderPod"]) == (1, "revise-0-write-g2")
    assert first["criteria"] == [{"name": "fixed", "met": False, "feedback": "write FIXED"}]
    assert phase["outcome"]["usage"]["inputTokens"] == 5
    assert phase["usage"]["inputTokens"] == status["usage"]["inputTokens"] == 5  # R43: summed
    assert phase["attempt"] == 2 and phase["podName"] == "revise-0-write-a2"
    assert {"revise-0-write-a1", "revise-0-write-a2", "revise-0-write-g1", "revise-0-write-g2"} <= (
        pod_names(kubectl, namespace)
    )
    assert "revise-0-write-a3" not in pod_names(kubectl, namespace)
    # The phase's artifacts are its last attempt's (R41), stored under attempt-2.
    (artifact,) = phase["artifacts"]
    assert artifact["path"] == "report.md" and "/attempt-2/output/" in artifact["url"]
    assert "keptAs" not in artifact
    seen = reasons(kubectl, namespace, "revise-0-write")
    assert seen.count("OutcomeEvaluationStart") == 2
    assert seen.count("OutcomeEvaluationEnd") == 2
    assert seen.count("OutcomeEvaluationOngoing") >= 1  # the first grader ran over 30 s
    log = kubectl.run("logs", "-n", namespace, "revise-0-write-a2", "-c", "agent").stdout
    feedback = json.loads(log.split("feedback: ", 1)[1].split("\n", 1)[0])
    assert feedback["result"] == "needs_revision"
    assert feedback["criteria"][0]["feedback"] == "write FIXED"
    assert "previous: ./report.md" in log
    assert "previous draft: draft report" in log
    assert "prompt has the revision section" in log
    grader_log = kubectl.run("logs", "-n", namespace, "revise-0-write-g1", "-c", "grader").stdout
    assert "no rubric" not in grader_log and "GRADE_RESULT" in grader_log


def test_an_operator_restarted_while_a_grader_runs_goes_on_from_that_evaluation(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    rubric = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rubric"}}
    kubectl.apply({**rubric, "data": {"rubric.md": RUBRIC}}, namespace)
    manifest = execution("resumed", AGENT, GRADER.replace("SLOW", "8"))
    outcome = manifest["spec"]["phases"][0]["outcome"]
    del outcome["rubric"]
    outcome["rubricFrom"] = {"configMapKeyRef": {"name": "rubric", "key": "rubric.md"}}
    kubectl.apply(manifest, namespace)

    def grading() -> bool:
        pod = kubectl.json("get", "pod", "-n", namespace, "resumed-0-write-g1")
        return bool(pod.get("status", {}).get("phase") == "Running")

    wait_for(grading, timeout=60, what="the first grader to run")
    operator.kill()
    time.sleep(2)
    operator.start()
    status = wait_finished(kubectl, namespace, "resumed", timeout=120)
    phase = phase_status(kubectl, namespace, "resumed-0-write")
    assert (status["status"], results(phase)) == ("completed", ["needs_revision", "satisfied"])
    seen = reasons(kubectl, namespace, "resumed-0-write")
    assert (seen.count("OutcomeEvaluationStart"), seen.count("OutcomeEvaluationEnd")) == (2, 2)
    pods = {p for p in pod_names(kubectl, namespace) if p.startswith("resumed-")}
    assert pods == {f"resumed-0-write-{p}" for p in ("a1", "a2", "g1", "g2")}


def test_an_agent_that_never_satisfies_the_rubric_ends_outcome_not_met(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    never = AGENT.replace("FIXED report", "still a draft")
    kubectl.apply(
        execution("never", never, GRADER.replace("SLOW", "0"), max_iterations=2), namespace
    )
    status = wait_finished(kubectl, namespace, "never", timeout=120)
    phase = phase_status(kubectl, namespace, "never-0-write")
    assert results(phase) == ["needs_revision", "max_iterations_reached"]
    assert (status["status"], phase["status"]) == ("failed", "failed")
    assert phase["failureClassification"] == status["failureClassification"] == "outcome_not_met"
    assert phase.get("reportedFailureReason") is None
    outcome = phase["taskOutcome"]
    assert (outcome["status"], outcome["source"], outcome["terminalReason"]) == (
        "partial_success",
        "system",
        "max_iterations",
    )
    assert outcome["blockers"] == [
        {"type": "unmet_criterion", "message": "fixed: write FIXED", "recoverable": True}
    ]
    (artifact,) = phase["artifacts"]
    assert artifact["keptAs"] == "failed_phase" and "/attempt-2/" in artifact["url"]
    assert artifact["title"] == "report.md (kept from a failed phase)"
    assert status["deliverableProduced"] is True
    assert "never-0-write-g3" not in pod_names(kubectl, namespace)


def test_a_grader_that_fails_gives_a_failed_evaluation(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    graders = {
        "exits": "echo grading; exit 1",
        "unreadable": 'echo \'GRADE_RESULT: {"result": "great"}\'; echo GRADE_RESULT_END',
        "silent": "echo I looked at it and it seems fine",
    }
    for name, grader in graders.items():
        kubectl.apply(execution(name, AGENT, grader), namespace)
    for name in graders:
        status = wait_finished(kubectl, namespace, name, timeout=90)
        phase = phase_status(kubectl, namespace, f"{name}-0-write")
        assert results(phase) == ["failed"], name
        assert (status["status"], phase["status"]) == ("failed", "failed"), name
        assert phase["failureClassification"] == "platform", name
        assert phase["artifacts"][0]["keptAs"] == "failed_phase", name
        assert f"{name}-0-write-a2" not in pod_names(kubectl, namespace)
    assert "exited with code 1" in phase_status(kubectl, namespace, "exits-0-write")["error"]
    assert "GRADE_RESULT" in phase_status(kubectl, namespace, "silent-0-write")["error"]


def test_an_interrupt_while_the_grader_runs_interrupts_the_phase_and_execution(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("cut", AGENT, GRADER.replace("SLOW", "120")), namespace)

    def grading() -> bool:
        pod = kubectl.json("get", "pod", "-n", namespace, "cut-0-write-g1")
        return bool(pod.get("status", {}).get("phase") == "Running")

    wait_for(grading, timeout=60, what="the grader to run")
    # The operator restarts while the grader runs: the new one finds the same grader pod.
    operator.kill()
    operator.start()
    time.sleep(3)
    kubectl.run(
        "patch", "execution", "cut", "-n", namespace, "--type=merge", "-p",
        '{"spec": {"interrupt": true}}',
    )  # fmt: skip
    status = wait_finished(kubectl, namespace, "cut", timeout=60)
    phase = phase_status(kubectl, namespace, "cut-0-write")
    assert (status["status"], phase["status"]) == ("interrupted", "interrupted")
    assert results(phase) == ["interrupted"]
    assert phase["outcome"]["result"] == status["outcome"] == "interrupted"
    assert phase["artifacts"][0]["keptAs"] == "partial"
    assert status["deliverableProduced"] is False
    assert reasons(kubectl, namespace, "cut-0-write").count("OutcomeEvaluationStart") == 1
    assert "cut-0-write-a2" not in pod_names(kubectl, namespace)


def test_a_failed_agent_attempt_is_never_graded(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    failing = 'echo draft > "$AGENTJOBS_OUTPUT_DIR/report.md"; exit 1'
    kubectl.apply(execution("broken", failing, GRADER.replace("SLOW", "0")), namespace)
    status = wait_finished(kubectl, namespace, "broken", timeout=60)
    phase = phase_status(kubectl, namespace, "broken-0-write")
    assert (status["status"], phase["status"]) == ("failed", "failed")
    assert phase["failureClassification"] == "platform"
    assert "outcome" not in phase
    assert "broken-0-write-g1" not in pod_names(kubectl, namespace)
    assert "OutcomeEvaluationStart" not in reasons(kubectl, namespace, "broken-0-write")


def test_an_interrupt_while_the_agent_runs_interrupts_it_ungraded(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    slow = 'echo draft > "$AGENTJOBS_OUTPUT_DIR/report.md"; echo drafted; sleep 120'
    kubectl.apply(execution("stop", slow, GRADER.replace("SLOW", "0")), namespace)
    # The phase is running from its pod's creation on: wait for the agent's own word.
    logs = ["logs", "stop-0-write-a1", "-c", "agent", "-n", namespace]
    wait_for(
        lambda: "drafted" in kubectl.run(*logs, check=False).stdout,
        timeout=60,
        what="the agent to write its draft",
    )
    time.sleep(3)  # the harvester has synced the draft
    kubectl.run(
        "patch", "execution", "stop", "-n", namespace, "--type=merge", "-p",
        '{"spec": {"interrupt": true}}',
    )  # fmt: skip
    status = wait_finished(kubectl, namespace, "stop", timeout=60)
    phase = phase_status(kubectl, namespace, "stop-0-write")
    assert (status["status"], phase["status"]) == ("interrupted", "interrupted")
    assert "outcome" not in phase
    assert [a["keptAs"] for a in phase["artifacts"]] == ["partial"]
    assert "stop-0-write-g1" not in pod_names(kubectl, namespace)


def test_a_cancel_while_the_grader_runs_cancels_the_phase(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    kubectl.apply(execution("called-off", AGENT, GRADER.replace("SLOW", "120")), namespace)

    def grading() -> bool:
        pod = kubectl.json("get", "pod", "-n", namespace, "called-off-0-write-g1")
        return bool(pod.get("status", {}).get("phase") == "Running")

    wait_for(grading, timeout=60, what="the grader to run")
    kubectl.run(
        "patch", "execution", "called-off", "-n", namespace, "--type=merge", "-p",
        '{"spec": {"cancel": true}}',
    )  # fmt: skip
    status = wait_finished(kubectl, namespace, "called-off", timeout=60)
    phase = phase_status(kubectl, namespace, "called-off-0-write")
    assert (status["status"], phase["status"]) == ("cancelled", "cancelled")
    assert results(phase) == ["interrupted"]
    assert phase["artifacts"][0]["keptAs"] == "partial"
