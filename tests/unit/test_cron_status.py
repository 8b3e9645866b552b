"""A CronExecution's runs read from the API, the Execution it makes, its status and its CRD
(R74).

Cases: a run's scheduled time is its annotation's (its creation without one), finished and
succeeded from its status; the last scheduled time is the latest of the status's and the
runs'; the Execution made is named and owned as the plan says, carries the template's labels
and annotations beside the operator's, and its spec is the template's; the status lists the
active runs by name, keeps the latest success, and says why a schedule cannot be read; the
CRD takes the Execution schema's CEL rules into the template except those that compare an
object with its former self, and bounds the CronExecution's name.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agentjobs.contract.scheduling import cron, cron_status
from agentjobs.contract.scheduling.cron_plan import Run
from agentjobs.models.crd import custom_resource_definitions
from agentjobs.models.resources import ExecutionSpec
from agentjobs.models.scheduling import CronExecutionSpec, CronExecutionStatus

NOW = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
SPEC = CronExecutionSpec.model_validate(
    {
        "schedule": "*/5 * * * *",
        "concurrencyPolicy": "Forbid",
        "executionTemplate": {
            "metadata": {"labels": {"team": "a"}, "annotations": {"note": "nightly"}},
            "spec": {"phases": [{"name": "fix", "image": "agent:1", "prompt": "Fix it."}]},
        },
    }
)


def execution(
    name: str, scheduled: str | None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    annotations = {cron_status.ANNOTATION_SCHEDULED: scheduled} if scheduled else {}
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-12-05T09:00:02Z",
            "annotations": annotations,
        },
        "status": status or {},
    }


def test_a_run_is_read_from_its_annotation_and_status() -> None:
    run, uid, ended = cron_status.run_of(
        execution(
            "n-1",
            "2026-12-05T09:25:00Z",
            {"status": "completed", "finishedAt": "2026-12-05T09:27:00Z"},
        )
    )
    assert run == Run("n-1", NOW - timedelta(minutes=5), finished=True, succeeded=True)
    assert (uid, ended) == ("uid-n-1", NOW - timedelta(minutes=3))
    running, _, ended = cron_status.run_of(execution("n-2", None, {"status": "running"}))
    assert running == Run("n-2", datetime(2026, 12, 5, 9, 0, 2, tzinfo=UTC))
    assert ended is None
    failed, _, _ = cron_status.run_of(
        execution("n-3", "2026-12-05T09:20:00Z", {"status": "failed", "finishedAt": "x"})
    )
    assert failed.finished is False  # a time that does not parse is no end


def test_the_last_scheduled_time_is_the_latest_the_status_or_a_run_shows() -> None:
    schedule = cron.parse(SPEC.schedule)
    recorded = CronExecutionStatus(last_schedule_time=NOW - timedelta(minutes=10))
    later = Run("n-1", NOW - timedelta(minutes=5))
    state = cron_status.state(
        "n", SPEC, schedule, created=NOW - timedelta(days=1), recorded=recorded, runs=[later]
    )
    assert state.last_scheduled == later.scheduled
    assert state.concurrency.value == "Forbid"
    alone = cron_status.state(
        "n", SPEC, schedule, created=NOW, recorded=CronExecutionStatus(), runs=[]
    )
    assert alone.last_scheduled is None


def test_the_execution_made_is_the_templates_named_and_owned_as_planned() -> None:
    scheduled = NOW - timedelta(minutes=5)
    made = cron_status.execution_manifest(
        SPEC,
        cron_name="nightly",
        cron_uid="uid-c",
        run_name="nightly-29939245",
        scheduled=scheduled,
    )
    meta = made["metadata"]
    assert meta["name"] == "nightly-29939245"
    assert meta["labels"] == {"team": "a", "agentjobs.io/cron": "nightly"}
    assert meta["annotations"] == {
        "note": "nightly",
        "agentjobs.io/scheduled-at": "2026-12-05T09:25:00Z",
    }
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("CronExecution", "uid-c", True)
    assert ExecutionSpec.model_validate(made["spec"]) == SPEC.execution_template.spec
    assert "cancel" not in made["spec"]  # defaults are left to the API server


def test_the_status_lists_active_runs_keeps_the_latest_success_and_says_why_not() -> None:
    found = [
        (Run("n-2", NOW), "u2", None),
        (Run("n-1", NOW, finished=True, succeeded=True), "u1", NOW - timedelta(minutes=1)),
        (Run("n-0", NOW), "u0", None),
    ]
    recorded = CronExecutionStatus(last_successful_time=NOW - timedelta(hours=1))
    status = cron_status.status(
        recorded,
        found,
        last_scheduled=NOW,
        next_time=NOW + timedelta(minutes=5),
        schedule_error=None,
        generation=2,
        now=NOW,
    )
    assert [(a.name, a.uid) for a in status.active] == [("n-0", "u0"), ("n-2", "u2")]
    assert status.last_successful_time == NOW - timedelta(minutes=1)
    assert status.next_schedule_time == NOW + timedelta(minutes=5)
    [valid] = status.conditions
    assert (valid.type, valid.status, valid.observed_generation) == ("ScheduleValid", "True", 2)
    broken = cron_status.status(
        status,
        found,
        last_scheduled=NOW,
        next_time=None,
        schedule_error="minute 61 is out of range 0-59",
        generation=3,
        now=NOW,
    )
    [invalid] = broken.conditions
    assert (invalid.status, invalid.reason) == ("False", "InvalidSchedule")
    assert invalid.message == "minute 61 is out of range 0-59"
    assert broken.next_schedule_time is None and broken.last_schedule_time == NOW


def _rules(schema: Any) -> list[str]:
    if isinstance(schema, list):
        return [rule for item in schema for rule in _rules(item)]
    if not isinstance(schema, dict):
        return []
    own = [rule["rule"] for rule in schema.get("x-kubernetes-validations", [])]
    return own + [rule for value in schema.values() for rule in _rules(value)]


def test_the_template_keeps_the_executions_rules_but_those_about_changes() -> None:
    crds = custom_resource_definitions()
    execution_spec = crds["executions.yaml"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    cron_schema = crds["cronexecutions.yaml"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    template = cron_schema["properties"]["spec"]["properties"]["executionTemplate"]
    executions = _rules(execution_spec["properties"]["spec"])
    kept = _rules(template["properties"]["spec"])
    assert any("oldSelf" in rule for rule in executions)
    assert kept == [rule for rule in executions if "oldSelf" not in rule]
    assert cron_schema["x-kubernetes-validations"][0]["rule"] == "size(self.metadata.name) <= 243"
    names = crds["cronexecutions.yaml"]["spec"]["names"]
    assert (names["kind"], names["shortNames"]) == ("CronExecution", ["cex"])
