"""The CronExecution and ExecutionQueue custom resources: when Executions run.

A CronExecution makes Executions on a schedule, as a CronJob makes Jobs.

The spec's fields mean what a CronJob's of the same name mean (R74). What the schema can
check it checks at apply time; a schedule whose numbers are out of range, or a time zone
the operator's time-zone database does not know, is told by the ``ScheduleValid``
condition, as CEL cannot read the tz database.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from agentjobs.models.contract import ContractModel
from agentjobs.models.kubernetes import KubernetesModel
from agentjobs.models.resource_status import Conditions
from agentjobs.models.resources import ExecutionSpec, cel, validations

# Five fields separated by spaces, or one of the macros; no TZ= or CRON_TZ= prefix.
SCHEDULE_SHAPE = (
    r"^ *(@(yearly|annually|monthly|weekly|daily|midnight|hourly)"
    r"|[0-9A-Za-z*?,/-]+( +[0-9A-Za-z*?,/-]+){4}) *$"
)
TIME_ZONE_SHAPE = r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$"
# A run's name is "<cron>-<unix minute>" (8 digits until the year 2160), within 253.
MAX_CRON_NAME = 243
ROOT_RULES = validations(
    cel(
        f"size(self.metadata.name) <= {MAX_CRON_NAME}",
        f"a CronExecution's name may be at most {MAX_CRON_NAME} characters: its Executions "
        "are named after it with '-<scheduled minute>' added",
    )
)


class TemplateMetadata(KubernetesModel):
    """What each Execution made gets in its metadata."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class ExecutionTemplate(KubernetesModel):
    """The Execution to make at each scheduled time."""

    metadata: TemplateMetadata | None = None
    spec: ExecutionSpec


class CronExecutionSpec(KubernetesModel):
    """When to make an Execution from ``executionTemplate``, and what to keep."""

    schedule: str = Field(
        min_length=1,
        max_length=200,
        json_schema_extra=validations(
            cel(
                f"self.matches('{SCHEDULE_SHAPE}')",
                "schedule must be five cron fields (minute hour day-of-month month "
                "day-of-week) separated by spaces, or one of @yearly, @annually, "
                "@monthly, @weekly, @daily, @midnight, @hourly; set a time zone with "
                "timeZone, not in the schedule",
            )
        ),
    )
    time_zone: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        json_schema_extra=validations(
            cel(
                f"self.matches('{TIME_ZONE_SHAPE}')",
                "timeZone must be a name of the IANA time-zone database, e.g. Europe/Berlin",
            )
        ),
    )
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] = "Allow"
    starting_deadline_seconds: int | None = Field(default=None, ge=0)
    suspend: bool = False
    successful_executions_history_limit: int = Field(default=3, ge=0, le=1000)
    failed_executions_history_limit: int = Field(default=1, ge=0, le=1000)
    execution_template: ExecutionTemplate


class ActiveRun(ContractModel):
    """An Execution the CronExecution made that has not finished."""

    name: str
    uid: str


class CronExecutionStatus(ContractModel):
    """What a CronExecution reports: its runs as a CronJob reports its Jobs."""

    last_schedule_time: datetime | None = None
    last_successful_time: datetime | None = None
    next_schedule_time: datetime | None = None
    active: list[ActiveRun] = []
    observed_generation: int | None = None
    conditions: Conditions = []


class ExecutionQueueSpec(KubernetesModel):
    """R75: how many of the namespace's Executions naming this queue may run at once, and
    start in a minute."""

    max_running: int = Field(ge=1, le=100_000)
    max_starts_per_minute: int | None = Field(default=None, ge=1, le=100_000)
