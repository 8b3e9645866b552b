"""What the demo shows while its Execution runs: each phase's transitions, each outcome
evaluation (R43), the agents' and graders' output live, and at the end the artifacts."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

from devcluster import demo_diagnosis
from devcluster.demo_kubectl import AGENTJOBS, NAMESPACE, TIMEOUT_SECONDS, DemoError, Kubectl


def _follow_log(kubectl: Kubectl, pod: str, container: str) -> None:
    """Print the agent's (or grader's) output as it comes, indented; retry while its
    container starts."""
    argv = ["kubectl", "logs", "-f", "-n", NAMESPACE, pod, "-c", container, "--prefix=false"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with subprocess.Popen(
            argv, env=kubectl.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(f"    | {line.rstrip()}", flush=True)
        if process.returncode == 0:
            return
        time.sleep(0.3)  # not started yet (PodInitializing)


def _phase_line(phase: dict[str, Any]) -> str:
    status = phase.get("status") or {}
    name = phase["spec"]["name"]
    state = status.get("status") or "pending"
    if state == "running":
        return f"phase {name}: running in pod {status.get('podName')}"
    if state in ("pending", "waiting"):
        return f"phase {name}: {state}"
    report = status.get("report") or {}
    verdict = f"phase {name}: {state}"
    if report.get("comments"):
        verdict += f' (the agent says: "{report["comments"]}")'
    if status.get("error"):
        verdict += f" - {status['error']}"
    return verdict


def _evaluation_lines(phase: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """Each evaluation of the phase's outcome as it stands (R43): its grader pod, whether it
    has ended, and a line saying it is grading or its result."""
    lines = []
    outcome = (phase.get("status") or {}).get("outcome") or {}
    for evaluation in outcome.get("evaluations") or []:
        pod = str(evaluation.get("graderPod"))
        head = f"  evaluation {evaluation['iteration']} (grader pod {pod})"
        result = evaluation.get("result")
        if result is None:
            lines.append((pod, False, f"{head}: grading"))
            continue
        unmet = [c["name"] for c in evaluation.get("criteria") or [] if not c.get("met")]
        detail = f"; not met: {', '.join(unmet)}" if unmet else ""
        explanation = evaluation.get("explanation") or ""
        lines.append((pod, True, f"{head}: {result} - {explanation}{detail}"))
    return lines


def watch(kubectl: Kubectl, execution_name: str) -> dict[str, Any]:
    """Print phase transitions, evaluations and the agents' and graders' output until the
    Execution has finished."""
    seen: dict[str, str] = {}
    evaluations_shown: set[str] = set()
    followers: dict[str, threading.Thread] = {}
    deadline = time.monotonic() + TIMEOUT_SECONDS
    selector = f"agentjobs.io/execution={execution_name}"
    while True:
        # The Execution before its phases: once it has finished, this pass shows their ends.
        execution: dict[str, Any] = kubectl.json(
            "get", "execution", execution_name, "-n", NAMESPACE
        )
        phases = kubectl.json("get", "phases", "-n", NAMESPACE, "-l", selector)["items"]
        for phase in sorted(phases, key=lambda p: p["spec"].get("index", 0)):
            name, status = phase["metadata"]["name"], phase.get("status") or {}
            pod = status.get("podName")
            evaluations = _evaluation_lines(phase)
            graders = [grader for grader, _, _ in evaluations]
            containers: dict[str, str] = {pod: "agent"} if pod else {}
            containers |= dict.fromkeys(graders, "grader")
            for followed, container in containers.items():
                if followed not in followers:
                    followers[followed] = threading.Thread(
                        target=_follow_log, args=(kubectl, followed, container), daemon=True
                    )
                    followers[followed].start()
            for grader, ended, line in evaluations:
                if line in evaluations_shown:
                    continue
                if ended and grader in followers:
                    followers[grader].join(timeout=10)  # the grader's words before its result
                evaluations_shown.add(line)
                print(line, flush=True)
            line = _phase_line(phase)
            if seen.get(name) == line:
                continue
            if pod and status.get("finishedAt"):
                followers[pod].join(timeout=10)  # the agent's last words before the verdict
            seen[name] = line
            print(line, flush=True)
        conditions = (execution.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Finished" and c["status"] == "True" for c in conditions):
            return execution
        if time.monotonic() > deadline:
            pods = kubectl.json("get", "pods", "-n", NAMESPACE, "-l", selector)["items"]
            lines = demo_diagnosis.where_it_stands(execution, phases, pods)
            raise DemoError(
                f"the execution did not finish in {TIMEOUT_SECONDS:.0f} s; where it stands:\n"
                + "\n".join(f"  {line}" for line in lines)
            )
        time.sleep(0.5)


def print_artifacts(kubectl: Kubectl, execution_name: str) -> None:
    """The artifact list, from `agentjobs artifacts` (or the phases' status without it)."""
    result = subprocess.run(
        [str(AGENTJOBS), "artifacts", f"{NAMESPACE}/{execution_name}"],
        env=kubectl.env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        print(result.stdout.rstrip())
        return
    if "invalid choice" not in result.stderr:
        raise DemoError(f"`agentjobs artifacts` failed:\n{result.stderr.strip()}")
    selector = f"agentjobs.io/execution={execution_name}"
    for phase in kubectl.json("get", "phases", "-n", NAMESPACE, "-l", selector)["items"]:
        for artifact in (phase.get("status") or {}).get("artifacts") or []:
            print(f"{phase['spec']['name']:12} {json.dumps(artifact)}")
