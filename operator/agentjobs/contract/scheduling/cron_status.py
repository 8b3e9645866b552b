"""A CronExecution's runs as the API shows them, the Execution it makes, and its status.

Everything here is a function of what the cluster holds: the CronExecution and the
Executions it controls. ``lastScheduleTime`` is the latest of what the status recorded
and the scheduled times of the runs there are, so a run created just before a crash
(its status not yet written) still counts as scheduled, and a restart never runs its
time again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from agentjobs.contract.scheduling import cron, cron_plan
from agentjobs.kube import conditions, naming
from agentjobs.models.resources import API_VERSION, GROUP
from agentjobs.models.scheduling import ActiveRun, CronExecutionSpec, CronExecutionStatus

LABEL_CRON = f"{GROUP}/cron"
ANNOTATION_SCHEDULED = f"{GROUP}/scheduled-at"
SCHEDULE_VALID = "ScheduleValid"


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def run_of(execution: Mapping[str, Any]) -> tuple[cron_plan.Run, str, datetime | None]:
    """The run an Execution is, its UID, and when it finished (None: it has not)."""
    meta = execution["metadata"]
    status = execution.get("status") or {}
    scheduled = _time((meta.get("annotations") or {}).get(ANNOTATION_SCHEDULED))
    scheduled = scheduled or _time(meta.get("creationTimestamp"))
    assert scheduled is not None, "the API server always sets creationTimestamp"
    finished_at = _time(status.get("finishedAt"))
    run = cron_plan.Run(
        name=meta["name"],
        scheduled=scheduled,
        finished=finished_at is not None,
        succeeded=status.get("status") == "completed",
    )
    return run, meta["uid"], finished_at


def state(
    name: str,
    spec: CronExecutionSpec,
    schedule: cron.Schedule,
    *,
    created: datetime,
    recorded: CronExecutionStatus,
    runs: Iterable[cron_plan.Run],
) -> cron_plan.CronState:
    """The plan's view of a CronExecution."""
    scheduled = [run.scheduled for run in runs]
    if recorded.last_schedule_time is not None:
        scheduled.append(recorded.last_schedule_time)
    return cron_plan.CronState(
        name=name,
        schedule=schedule,
        created=created,
        last_scheduled=max(scheduled, default=None),
        concurrency=cron_plan.Concurrency(spec.concurrency_policy),
        starting_deadline_seconds=spec.starting_deadline_seconds,
        suspend=spec.suspend,
        successful_limit=spec.successful_executions_history_limit,
        failed_limit=spec.failed_executions_history_limit,
    )


def execution_manifest(
    spec: CronExecutionSpec,
    *,
    cron_name: str,
    cron_uid: str,
    run_name: str,
    scheduled: datetime,
) -> dict[str, Any]:
    """The Execution for one scheduled time, controlled by its CronExecution (so it goes
    with it), labelled with it (so ``kubectl get executions -l`` finds its runs)."""
    template = spec.execution_template
    metadata = template.metadata
    labels = dict(metadata.labels or {}) if metadata else {}
    annotations = dict(metadata.annotations or {}) if metadata else {}
    labels[LABEL_CRON] = naming.label_value(cron_name)
    annotations[ANNOTATION_SCHEDULED] = scheduled.isoformat().replace("+00:00", "Z")
    return {
        "apiVersion": API_VERSION,
        "kind": "Execution",
        "metadata": {
            "name": run_name,
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": "CronExecution",
                    "name": cron_name,
                    "uid": cron_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": template.spec.model_dump(mode="json", by_alias=True, exclude_defaults=True),
    }


def status(
    recorded: CronExecutionStatus,
    runs: Iterable[tuple[cron_plan.Run, str, datetime | None]],
    *,
    last_scheduled: datetime | None,
    next_time: datetime | None,
    schedule_error: str | None,
    generation: int | None,
    now: datetime,
) -> CronExecutionStatus:
    """The status for the runs there are (deleted ones excluded) and the schedule's next time."""
    listed = list(runs)
    active = sorted(
        (ActiveRun(name=run.name, uid=uid) for run, uid, _ in listed if not run.finished),
        key=lambda run: run.name,
    )
    successes = [end for run, _, end in listed if run.succeeded and end is not None]
    if recorded.last_successful_time is not None:
        successes.append(recorded.last_successful_time)
    valid = schedule_error is None
    return CronExecutionStatus(
        last_schedule_time=last_scheduled,
        last_successful_time=max(successes, default=None),
        next_schedule_time=next_time if valid else None,
        active=active,
        observed_generation=generation,
        conditions=conditions.with_condition(
            recorded.conditions,
            SCHEDULE_VALID,
            true=valid,
            reason="Valid" if valid else "InvalidSchedule",
            message="" if valid else schedule_error or "",
            generation=generation,
            now=now,
        ),
    )
