"""What benchmarks/scale.py counts as running at once, from the watch events it is given.

Cases:
- a Job counts while its pod's container runs, and no longer once it has exited;
- a phase counts only while its pod's container runs AND its Phase holds a log checkpoint;
- a phase whose log is first read after its agent exited (a stream that waited for a
  connection) never counts;
- every pod seen is remembered, and a Phase's attempt, to tell a phase that ran twice;
- an owner is finished at its first event with the wanted condition True, and only then,
  and its verdict counted once: an Execution's status, a Job's condition.
"""

from __future__ import annotations

from typing import Any

from benchmarks.scale import Observed


def _pod(name: str, *, running: bool) -> dict[str, Any]:
    state = {"running": {}} if running else {"terminated": {"exitCode": 0}}
    return {"metadata": {"name": name}, "status": {"containerStatuses": [{"state": state}]}}


def _owner(name: str, **conditions: str) -> dict[str, Any]:
    listed = [{"type": kind, "status": state} for kind, state in conditions.items()]
    return {"metadata": {"name": name}, "status": {"conditions": listed}}


def _phase(name: str, pod: str, *, log: bool, attempt: int = 1) -> dict[str, Any]:
    status: dict[str, Any] = {"status": "running", "podName": pod, "attempt": attempt}
    if log:
        status["log"] = {
            "bytesRead": 10,
            "sha256": "ab",
        }
    return {"metadata": {"name": name}, "status": status}


def test_a_job_counts_while_its_container_runs() -> None:
    observed = Observed(live_logs_only=False)
    observed.pod(_pod("a", running=True))
    observed.pod(_pod("b", running=True))
    observed.pod(_pod("a", running=False))
    observed.pod(_pod("c", running=True))

    assert observed.peak == 2
    assert observed.running == {"b", "c"}


def test_a_phase_counts_only_while_its_log_is_read_live() -> None:
    observed = Observed(live_logs_only=True)
    observed.pod(_pod("p1", running=True))
    observed.pod(_pod("p2", running=True))
    assert observed.peak == 0  # running, but nobody reads their logs yet

    observed.phase(_phase("x1", "p1", log=True))
    observed.phase(_phase("x2", "p2", log=False))

    assert observed.peak == 1


def test_a_log_first_read_after_the_agent_exited_never_counts() -> None:
    observed = Observed(live_logs_only=True)
    observed.pod(_pod("p1", running=True))
    observed.pod(_pod("p1", running=False))
    observed.phase(_phase("x1", "p1", log=True))

    assert observed.peak == 0


def test_every_pod_and_each_phases_attempt_are_remembered() -> None:
    observed = Observed(live_logs_only=True)
    observed.pod(_pod("x1-a1", running=True))
    observed.pod(_pod("x1-a1", running=False))
    observed.pod(_pod("x1-a2", running=True))
    observed.phase(_phase("x1", "x1-a2", log=False, attempt=2))

    assert observed.pods == {"x1-a1", "x1-a2"}
    assert observed.attempts == {"x1": 2}


def test_an_owner_is_finished_when_first_seen_with_its_condition_true() -> None:
    observed = Observed(live_logs_only=True)
    observed.owner(_owner("e1", Finished="False"), "Finished")
    observed.owner({"metadata": {"name": "e2"}}, "Finished")
    assert observed.finished == set()

    observed.owner(_owner("e1", Running="True", Finished="True"), "Finished")
    first = observed.last_finished_at
    observed.owner(_owner("e1", Finished="True"), "Finished")

    assert observed.finished == {"e1"}
    assert observed.last_finished_at == first > 0
    assert observed.verdicts == {"Finished": 1}  # no status: the condition names it


def test_each_finished_executions_status_is_counted_once() -> None:
    observed = Observed(live_logs_only=True)
    for name, verdict in (("e1", "completed"), ("e2", "failed"), ("e1", "completed")):
        execution = _owner(name, Finished="True")
        execution["status"]["status"] = verdict
        observed.owner(execution, "Finished")
    assert observed.verdicts == {"completed": 1, "failed": 1}
