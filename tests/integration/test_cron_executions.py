"""CronExecutions on the local cluster, on a clock sixty times as fast (R74).

The operator runs with `--cron-clock-speed 60` from a start the test fixes, so a schedule's
minute passes in a real second and a restart reads the same time. Cases: runs are made on
schedule, named by their scheduled minute and annotated with it, and the history limit
deletes the oldest finished; `Forbid` never has two runs at once, runs the time that
waited once the active run ends, and tells each wait by one Event; `Replace` cancels the
running one for the next; `suspend` makes nothing until it is lifted; an operator killed
across several scheduled times makes one catch-up run, for the latest of them, and none for
the others; a schedule with a field out of range, or an unknown time zone, is told by the
`ScheduleValid` condition, and one of the wrong shape is refused at apply time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, running, wait_for, working_script

SPEED = 60


def cron_execution(name: str, schedule: str, seconds: float = 0, **spec: Any) -> dict[str, Any]:
    phase = {"name": "work", "image": BUSYBOX, "prompt": "Do it.", "command": ["sh", "-c"]}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "CronExecution",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule,
            "executionTemplate": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {"phases": [{**phase, "args": [working_script(seconds)]}]},
            },
            **spec,
        },
    }


@pytest.fixture
def clock_start() -> datetime:
    return datetime.now(UTC)


@pytest.fixture
def cron_operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path, clock_start: datetime
) -> Iterator[OperatorProcess]:
    clock = ["--cron-clock-speed", str(SPEED), "--cron-clock-start", clock_start.isoformat()]
    yield from running(OperatorProcess(s3_env, namespace, tmp_path / "operator.log", clock))


def runs(kubectl: Kubectl, namespace: str, cron: str) -> list[dict[str, Any]]:
    """The CronExecution's Executions, oldest scheduled first."""
    items = kubectl.json("get", "executions", "-n", namespace, "-l", f"agentjobs.io/cron={cron}")
    return sorted(items["items"], key=lambda item: item["metadata"]["name"])


def minute(execution: dict[str, Any]) -> int:
    return int(execution["metadata"]["name"].rsplit("-", 1)[1])


def created_minutes(kubectl: Kubectl, namespace: str, cron: str) -> list[int]:
    """The scheduled minute of every run the operator said it made (deleted ones too)."""
    events = kubectl.json(
        "get", "events", "-n", namespace,
        "--field-selector", f"involvedObject.name={cron},reason=SuccessfulCreate",
    )["items"]  # fmt: skip
    return sorted(int(event["message"].rsplit("-", 1)[1]) for event in events)


def finished(execution: dict[str, Any]) -> bool:
    return execution.get("status", {}).get("finishedAt") is not None


def test_runs_are_made_on_schedule_and_the_oldest_finished_are_deleted(
    kubectl: Kubectl, namespace: str, cron_operator: OperatorProcess
) -> None:
    kubectl.apply(
        cron_execution("tick", "*/4 * * * *", successfulExecutionsHistoryLimit=2), namespace
    )
    wait_for(
        lambda: len(created_minutes(kubectl, namespace, "tick")) >= 4,
        timeout=60,
        what="four runs",
    )
    wait_for(
        lambda: (
            sum(finished(run) for run in runs(kubectl, namespace, "tick")) == 2
            and len(created_minutes(kubectl, namespace, "tick"))
            - len(runs(kubectl, namespace, "tick"))
            >= 2
        ),
        what="the history to be trimmed",
    )
    made = created_minutes(kubectl, namespace, "tick")
    assert all(m % 4 == 0 for m in made) and len(set(made)) == len(made)
    kept = runs(kubectl, namespace, "tick")
    kept_finished = [minute(run) for run in kept if finished(run)]
    # The finished ones kept are the latest finished: every deleted one is older.
    deleted = sorted(set(made) - {minute(run) for run in kept})
    assert deleted and max(deleted) < min(kept_finished)
    for run in kept:
        meta = run["metadata"]
        scheduled = datetime.fromtimestamp(minute(run) * 60, UTC)
        assert meta["annotations"]["agentjobs.io/scheduled-at"] == scheduled.strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
        assert meta["labels"]["team"] == "a"
        assert meta["ownerReferences"][0]["kind"] == "CronExecution"
    status = kubectl.json("get", "cronexecution", "tick", "-n", namespace)["status"]
    assert status["lastSuccessfulTime"] is not None
    assert status["lastScheduleTime"] >= scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_forbid_never_runs_two_at_once_and_runs_the_waiting_time_after(
    kubectl: Kubectl, namespace: str, cron_operator: OperatorProcess
) -> None:
    kubectl.apply(
        cron_execution("serial", "* * * * *", seconds=3, concurrencyPolicy="Forbid"), namespace
    )
    most = 0
    deadline = time.monotonic() + 50
    while time.monotonic() < deadline and len(runs(kubectl, namespace, "serial")) < 3:
        active = [run for run in runs(kubectl, namespace, "serial") if not finished(run)]
        most = max(most, len(active))
        time.sleep(0.2)
    made = runs(kubectl, namespace, "serial")
    assert len(made) >= 3 and most == 1
    # Each run started after the one before it had finished, many minutes apart.
    ends = [run["status"]["finishedAt"] for run in made[:2]]
    starts = [run["metadata"]["creationTimestamp"] for run in made[1:3]]
    assert all(start >= end for start, end in zip(starts, ends, strict=True))
    assert minute(made[1]) - minute(made[0]) > 1
    # Each waiting time is told once, however many reconciles see it wait.
    waits = kubectl.json(
        "get", "events", "-n", namespace,
        "--field-selector", "involvedObject.name=serial,reason=RunWaits",
    )["items"]  # fmt: skip
    messages = [event["message"] for event in waits]
    assert messages and len(messages) == len(set(messages)), messages


def test_replace_cancels_the_running_one_for_the_next(
    kubectl: Kubectl, namespace: str, cron_operator: OperatorProcess
) -> None:
    # A cancelled run is a failed one: a history of one would delete the first run as soon
    # as the second is cancelled, three real seconds later, and race the test's reads.
    cron = cron_execution(
        "swap", "*/3 * * * *", seconds=60, concurrencyPolicy="Replace",
        failedExecutionsHistoryLimit=10,
    )  # fmt: skip
    kubectl.apply(cron, namespace)
    wait_for(lambda: len(runs(kubectl, namespace, "swap")) >= 2, what="a second run")
    first = runs(kubectl, namespace, "swap")[0]["metadata"]["name"]
    try:
        wait_for(
            lambda: (
                kubectl.json("get", "execution", first, "-n", namespace)
                .get("status", {})
                .get("status")
                == "cancelled"
            ),
            what="the first run to be cancelled",
        )
    except AssertionError as error:  # what the cluster held then, to tell why
        phases = kubectl.json("get", "phases", "-n", namespace)["items"]
        held = {
            "execution": kubectl.json("get", "execution", first, "-n", namespace),
            "phases": {p["metadata"]["name"]: p.get("status", {}) for p in phases},
        }
        raise AssertionError(f"{error}: {json.dumps(held)}") from error
    execution = kubectl.json("get", "execution", first, "-n", namespace)
    assert execution["spec"]["cancel"] is True


def test_suspend_makes_nothing_until_it_is_lifted(
    kubectl: Kubectl, namespace: str, cron_operator: OperatorProcess
) -> None:
    kubectl.apply(cron_execution("paused", "* * * * *", suspend=True), namespace)
    time.sleep(5)  # five scheduled times
    assert runs(kubectl, namespace, "paused") == []
    kubectl.run(
        "patch", "-n", namespace, "cronexecution", "paused", "--type=merge",
        "-p", json.dumps({"spec": {"suspend": False}}),
    )  # fmt: skip
    wait_for(lambda: runs(kubectl, namespace, "paused") != [], what="a run once resumed")


def test_an_operator_down_across_several_times_makes_one_catch_up_run(
    kubectl: Kubectl, namespace: str, cron_operator: OperatorProcess, clock_start: datetime
) -> None:
    kubectl.apply(cron_execution("nightly", "*/5 * * * *"), namespace)
    wait_for(lambda: runs(kubectl, namespace, "nightly") != [], what="the first run")
    cron_operator.kill()
    before = {minute(run) for run in runs(kubectl, namespace, "nightly")}
    time.sleep(16)  # three scheduled times pass with no operator
    cron_operator.start()
    restarted = datetime.now(UTC)
    wait_for(
        lambda: {minute(run) for run in runs(kubectl, namespace, "nightly")} - before,
        what="the catch-up run",
    )
    time.sleep(2)  # a second run for a missed time would come now
    made = created_minutes(kubectl, namespace, "nightly")
    after = sorted(set(made) - before)
    clock_now = clock_start + (restarted - clock_start) * SPEED
    latest_missed = int(clock_now.timestamp()) // 60 // 5 * 5
    # The latest missed time ran; the earlier missed times did not; no time ran twice.
    assert after[0] >= latest_missed, (after, latest_missed)
    missed = range(max(before) + 5, after[0], 5)
    assert len(missed) >= 2 and not set(missed) & set(after)
    assert len(made) == len(set(made)) and before <= set(made)


@pytest.mark.parametrize(
    ("schedule", "zone", "words"),
    [
        ("61 * * * *", None, "61"),
        ("0 9 * * *", "Mars/Olympus_Mons", "Mars/Olympus_Mons"),
    ],
)
def test_a_schedule_that_cannot_be_read_is_told_by_its_condition(
    kubectl: Kubectl,
    namespace: str,
    cron_operator: OperatorProcess,
    schedule: str,
    zone: str | None,
    words: str,
) -> None:
    extra = {"timeZone": zone} if zone else {}
    kubectl.apply(cron_execution("broken", schedule, **extra), namespace)

    def condition() -> dict[str, Any] | None:
        status = kubectl.json("get", "cronexecution", "broken", "-n", namespace).get("status", {})
        return next((c for c in status.get("conditions", []) if c["type"] == "ScheduleValid"), None)

    wait_for(lambda: condition() is not None, what="the ScheduleValid condition")
    found = condition()
    assert found is not None
    assert (found["status"], found["reason"]) == ("False", "InvalidSchedule")
    assert words in found["message"]
    time.sleep(2)
    assert runs(kubectl, namespace, "broken") == []


def test_a_schedule_of_the_wrong_shape_is_refused_at_apply_time(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    refused = kubectl.run(
        "apply", "-n", namespace, "-f", "-",
        input=json.dumps(cron_execution("short", "* * * *")), check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    assert "schedule must be five cron fields" in refused.stderr
