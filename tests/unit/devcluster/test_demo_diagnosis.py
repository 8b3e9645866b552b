"""What `make demo` prints when its Execution does not finish in time.

Cases: the issue's demo that never finished (a harvester crash-looping in a pod stuck in
Init:CrashLoopBackOff) shows the Execution's and the phase's conditions, the phase's
error, and each container's state with its restarts and last exit; an unscheduled pod
says why; a container's log-tail message is shown with its controls escaped and its lines
indented.
"""

from __future__ import annotations

from typing import Any

from devcluster.demo_diagnosis import where_it_stands

Obj = dict[str, Any]


def condition(kind: str, message: str, status: str = "True") -> Obj:
    return {"type": kind, "status": status, "reason": "Running", "message": message}


EXECUTION = {
    "metadata": {"name": "fix-flaky-test"},
    "status": {
        "status": "running",
        "conditions": [
            condition("Running", "phase investigate is running"),
            condition("Reconciling", "phase investigate is running"),
            condition("Complete", "", status="False"),
        ],
    },
}
WAITING = (
    "fix-flaky-test-0-investigate-a1 has not started: the harvester container failed twice "
    "before the agent started"
)
PHASES = [
    {
        "metadata": {"name": "fix-flaky-test-1-fix"},
        "spec": {"name": "fix", "index": 1},
    },
    {
        "metadata": {"name": "fix-flaky-test-0-investigate"},
        "spec": {"name": "investigate", "index": 0},
        "status": {
            "status": "running",
            "podName": "fix-flaky-test-0-investigate-a1",
            "conditions": [condition("Running", WAITING)],
        },
    },
]
HARVESTER = {
    "name": "harvester",
    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s"}},
    "restartCount": 1,
    "lastState": {
        "terminated": {
            "exitCode": 128,
            "reason": "StartError",
            "message": 'exec: "/tmp/clone/.venv/bin/agentjobs": no such file or directory',
        }
    },
}
POD = {
    "metadata": {"name": "fix-flaky-test-0-investigate-a1"},
    "status": {
        "phase": "Pending",
        "initContainerStatuses": [
            HARVESTER,
            {"name": "fetch-inputs", "state": {"waiting": {"reason": "PodInitializing"}}},
        ],
        "containerStatuses": [
            {"name": "agent", "state": {"waiting": {"reason": "PodInitializing"}}}
        ],
    },
}


def test_a_crash_looping_sidecar_is_shown_with_the_conditions_that_say_so() -> None:
    assert where_it_stands(EXECUTION, PHASES, [POD]) == [
        "execution fix-flaky-test: running",
        "  Running: phase investigate is running",
        "phase investigate: running (pod fix-flaky-test-0-investigate-a1)",
        f"  Running: {WAITING}",
        "phase fix: pending",
        "pod fix-flaky-test-0-investigate-a1: Pending",
        "  harvester: waiting (CrashLoopBackOff): back-off 20s; restarted 1 time; last ended "
        'with exit code 128 (StartError): exec: "/tmp/clone/.venv/bin/agentjobs": no such file '
        "or directory",
        "  fetch-inputs: waiting (PodInitializing)",
        "  agent: waiting (PodInitializing)",
    ]


def test_an_ended_phase_shows_its_error_and_an_unscheduled_pod_why() -> None:
    failed = {
        "metadata": {"name": "e-0-a"},
        "spec": {"name": "a", "index": 0},
        "status": {"status": "failed", "error": "no usable output"},
    }
    unscheduled = {
        "metadata": {"name": "e-0-a-a1"},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/1 nodes are available: 1 Insufficient cpu.",
                }
            ],
        },
    }
    lines = where_it_stands({"metadata": {"name": "e"}}, [failed], [unscheduled])
    assert lines == [
        "execution e: pending",
        "phase a: failed",
        "  error: no usable output",
        "pod e-0-a-a1: Pending",
        "  not scheduled: 0/1 nodes are available: 1 Insufficient cpu.",
    ]


def test_a_log_tail_message_cannot_move_the_terminal_and_keeps_its_lines() -> None:
    tail = "Traceback (most recent call last):\n\x1b[2Jboom\u202e\nValueError: x\n"
    ended = {
        "name": "fetch-inputs",
        "state": {"terminated": {"exitCode": 1, "reason": "Error", "message": tail}},
    }
    pod = {
        "metadata": {"name": "p"},
        "status": {"phase": "Failed", "initContainerStatuses": [ended]},
    }
    lines = where_it_stands({"metadata": {"name": "e"}}, [], [pod])
    assert lines[-1] == (
        "  fetch-inputs: terminated with exit code 1 (Error): Traceback (most recent call last):\n"
        "      \\x1b[2Jboom\\u202e\n"
        "      ValueError: x"
    )
