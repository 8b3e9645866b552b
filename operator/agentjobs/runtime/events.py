"""Kubernetes Events, posted only when a condition becomes true (and for a phase's milestones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import kopf

from agentjobs.kube import conditions
from agentjobs.models.resource_status import Condition


def post(body: dict[str, Any], *, reason: str, message: str, warning: bool = False) -> None:
    kind = "Warning" if warning else "Normal"
    kopf.event(kopf.Body(cast(kopf.RawBody, body)), type=kind, reason=reason, message=message)


def post_condition_changes(
    body: dict[str, Any],
    previous: Sequence[Condition],
    current: Sequence[Condition],
    *,
    untold: frozenset[str] = frozenset(),
) -> None:
    """An Event for each condition that became true, but those of types in ``untold``."""
    changed = conditions.changed_types(previous, current)
    for condition in current:
        if condition.type not in changed or condition.type in untold:
            continue
        if condition.type == "Finished" and ({"Complete", "Failed"} & set(changed)):
            continue  # Complete or Failed already tells it
        post(
            body,
            reason=condition.type if condition.type != "Finished" else condition.reason,
            message=condition.message or condition.reason,
            warning=condition.type == "Failed",
        )
