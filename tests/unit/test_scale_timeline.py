"""Where a scale run's time went, pod by pod (benchmarks/pod_timeline.py).

Cases:
- each interval is taken from the first event that shows it, later events change nothing;
- a pod's end is matched to its owner by the owner label (an Execution's, a Job's);
- a pod never running, or an owner never finished, leaves its intervals out;
- the spread printed is the median, p90 and max of the intervals.
"""

from __future__ import annotations

from typing import Any

from benchmarks.pod_timeline import EXECUTION_LABEL, JOB_LABEL, Timeline


def _pod(name: str, owner: str, state: str | None, label: str = EXECUTION_LABEL) -> dict[str, Any]:
    statuses = [{"state": {state: {}}}] if state else []
    return {
        "metadata": {"name": name, "labels": {label: owner}},
        "status": {"containerStatuses": statuses},
    }


def test_each_interval_starts_at_the_first_event_showing_it() -> None:
    timeline = Timeline(EXECUTION_LABEL)
    timeline.pod(_pod("e1-run", "e1", None), 10.0)
    timeline.pod(_pod("e1-run", "e1", None), 11.0)
    timeline.pod(_pod("e1-run", "e1", "running"), 12.5)
    timeline.pod(_pod("e1-run", "e1", "running"), 13.0)
    timeline.pod(_pod("e1-run", "e1", "terminated"), 57.5)
    timeline.pod(_pod("e1-run", "e1", "terminated"), 58.0)
    timeline.owner_finished("e1", 58.5)
    timeline.owner_finished("e1", 60.0)

    assert list(timeline.intervals(started=9.0).values()) == [[1.0], [2.5], [45.0], [1.0]]


def test_a_jobs_pod_is_matched_to_its_job_by_its_label() -> None:
    timeline = Timeline(JOB_LABEL)
    timeline.pod(_pod("j1-abcde", "j1", "running", label=JOB_LABEL), 1.0)
    timeline.pod(_pod("j1-abcde", "j1", "terminated", label=JOB_LABEL), 3.0)
    timeline.owner_finished("j1", 7.0)

    assert timeline.intervals(started=0.0)["terminated → finished (the controller)"] == [4.0]


def test_what_never_happened_is_left_out() -> None:
    timeline = Timeline(EXECUTION_LABEL)
    timeline.pod(_pod("a", "ea", None), 1.0)  # never started
    timeline.pod(_pod("b", "eb", "running"), 2.0)
    timeline.pod(_pod("b", "eb", "terminated"), 4.0)  # its Execution not finished

    made, starting, running, ending = timeline.intervals(started=0.0).values()
    assert (made, starting, running, ending) == ([1.0, 2.0], [0.0], [2.0], [])


def test_the_spread_is_the_median_p90_and_max() -> None:
    timeline = Timeline(EXECUTION_LABEL)
    for index in range(10):
        timeline.pod(_pod(f"p{index}", f"e{index}", "running"), float(index))

    made = timeline.describe(started=0.0).splitlines()[0]
    assert made == "  pod made (since the first apply): median 4.5 s, p90 9.0 s, max 9.0 s"
    assert timeline.describe(started=0.0).splitlines()[3].endswith(": none")
