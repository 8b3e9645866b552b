"""Conditions (``metav1.Condition``) for Executions and Phases.

Both resources carry the same four: ``Running``, ``Complete``, ``Failed``
and ``Finished`` (true on any terminal status, its reason the status), so
that ``kubectl wait --for=condition=Complete`` and ``--for=condition=Finished``
work on either. Three more follow kstatus (sigs.k8s.io/cli-utils), which Flux,
kpt and cli-utils' appliers wait on: ``Reconciling`` (true while pending or
running: InProgress), ``Stalled`` (true once it ended without completing:
Failed, as nothing more will happen without a new Execution) and ``Ready``
(true once completed: Current). A condition keeps its ``lastTransitionTime``
until its status changes. Only a true condition carries the message: it is the
outcome's summary or the error, up to a few KiB, and seven copies of it made
every status write larger (each is validated, diffed for ``managedFields``, stored
and sent to every watcher whole).

A Phase whose pod is held by scheduling gates also carries ``Queued`` (R73): true
while a gate holds it, false once the gates are gone; the moment it turned false is
when the pending timeout starts to count. Conditions of other types are kept as
they were by every write of the seven.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from agentjobs.models.resource_status import Condition

TERMINAL = frozenset({"completed", "failed", "cancelled", "interrupted"})
CONDITION_TYPES = ("Running", "Complete", "Failed", "Finished", "Reconciling", "Stalled", "Ready")
# kstatus's conditions restate the four above, so they post no events of their own.
KSTATUS_TYPES = frozenset({"Reconciling", "Stalled", "Ready"})
QUEUED = "Queued"


def _reason(status: str) -> str:
    return status.capitalize()


def _desired(status: str) -> dict[str, bool]:
    finished = status in TERMINAL
    return {
        "Running": status == "running",
        "Complete": status == "completed",
        "Failed": status == "failed",
        "Finished": finished,
        "Reconciling": not finished,
        "Stalled": finished and status != "completed",
        "Ready": status == "completed",
    }


def conditions_for(
    status: str,
    *,
    message: str,
    previous: Sequence[Condition],
    generation: int | None,
    now: datetime,
) -> list[Condition]:
    """The seven conditions for ``status`` (pending, running or a terminal status)."""
    before = {condition.type: condition for condition in previous}
    conditions = []
    for condition_type, true in _desired(status).items():
        value: Literal["True", "False"] = "True" if true else "False"
        old = before.get(condition_type)
        changed = old is None or old.status != value
        conditions.append(
            Condition(
                type=condition_type,
                status=value,
                reason=_reason(status),
                message=message if true else "",
                last_transition_time=now if changed or old is None else old.last_transition_time,
                observed_generation=generation,
            )
        )
    return conditions + [c for c in previous if c.type not in CONDITION_TYPES]


def with_condition(
    conditions: Sequence[Condition],
    condition_type: str,
    *,
    true: bool,
    reason: str,
    message: str,
    generation: int | None,
    now: datetime,
) -> list[Condition]:
    """``conditions`` with one condition set, its ``lastTransitionTime`` kept unless its
    status changes; the others as they were."""
    value: Literal["True", "False"] = "True" if true else "False"
    old = next((c for c in conditions if c.type == condition_type), None)
    changed = old is None or old.status != value
    condition = Condition(
        type=condition_type,
        status=value,
        reason=reason,
        message=message,
        last_transition_time=now if changed or old is None else old.last_transition_time,
        observed_generation=generation,
    )
    return [c for c in conditions if c.type != condition_type] + [condition]


def is_true(conditions: Sequence[Condition], condition_type: str) -> bool:
    return any(c.type == condition_type and c.status == "True" for c in conditions)


def released_at(conditions: Sequence[Condition]) -> datetime | None:
    """When the ``Queued`` condition turned false: the gates were seen gone then."""
    for condition in conditions:
        if condition.type == QUEUED and condition.status == "False":
            return condition.last_transition_time
    return None


def changed_types(previous: Sequence[Condition], current: Sequence[Condition]) -> list[str]:
    """The types that became true, kstatus's excepted (events are posted only for these)."""
    before = {condition.type: condition.status for condition in previous}
    return [
        c.type
        for c in current
        if before.get(c.type) != c.status and c.status == "True" and c.type not in KSTATUS_TYPES
    ]
