"""Clean-up of finished Executions: ``ttlSecondsAfterFinished``, as Jobs have it.

A finished Execution is deleted once its TTL has passed since ``finishedAt``;
its Phases, pods, ConfigMaps and Secrets go with it through their owners.

Decisions where the issue is silent: an Execution's own TTL wins over the
operator's default (``--ttl-seconds-after-finished``), and 0 means at once;
an Execution with a completion notification still Pending is kept until the
notification is Delivered or Failed, so the clean-up never drops an event
the automation is owed (R51).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agentjobs.models.resource_status import ExecutionResourceStatus
from agentjobs.models.resources import ExecutionSpec


def expires_at(
    spec: ExecutionSpec, status: ExecutionResourceStatus, *, default: int | None
) -> datetime | None:
    """When the Execution is to be deleted; None while it runs, owes a notification, or has
    no TTL."""
    ttl = (
        spec.ttl_seconds_after_finished if spec.ttl_seconds_after_finished is not None else default
    )
    if ttl is None or status.finished_at is None:
        return None
    if any(record.state == "Pending" for record in status.notifications):
        return None
    return status.finished_at + timedelta(seconds=ttl)
