"""R13f: summing the tokens and cost agent CLIs report.

A count no event reported stays None ("not reported"), never 0: a CLI that
prints no cost has not said its run was free.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from agentjobs.contract.text import agent_text
from agentjobs.models.contract import Usage

_FIELDS = tuple(Usage.model_fields)


def _plus(left: float | None, right: float | None) -> float | None:
    """A sum that saturates within what a status can hold (int64 counts, finite costs)."""
    if left is None:
        return right
    if right is None:
        return left
    if isinstance(left, int) and isinstance(right, int):
        return agent_text.count(left + right)
    return agent_text.cost(left + right)


def add(total: Usage | None, more: Usage | None) -> Usage | None:
    """``total`` and ``more`` summed field by field (None when both are None)."""
    if total is None:
        return more
    if more is None:
        return total
    return Usage.model_validate(
        {name: _plus(getattr(total, name), getattr(more, name)) for name in _FIELDS}
    )


def total(usages: Iterable[Usage | None]) -> Usage | None:
    """The sum of every usage given; None when none was reported."""
    summed: Usage | None = None
    for usage in usages:
        summed = add(summed, usage)
    return summed


def growth(before: Usage | None, now: Usage | None) -> Usage | None:
    """What ``now`` adds to ``before``, field by field (a count never shrinks); None when
    nothing grew."""
    if now is None:
        return None
    if before is None:
        return now
    grown: dict[str, float] = {}
    for name in _FIELDS:
        new, old = getattr(now, name), getattr(before, name)
        if new is not None and new > (old or 0):
            grown[name] = new - (old or 0)
    return Usage.model_validate(grown) if grown else None


def larger(left: Usage | None, right: Usage | None) -> Usage | None:
    """The larger of the two, field by field."""
    if left is None or right is None:
        return left or right
    return Usage.model_validate(
        {
            name: max(
                (v for v in (getattr(left, name), getattr(right, name)) if v is not None),
                default=None,
            )
            for name in _FIELDS
        }
    )


def dollars(value: Decimal) -> float | None:
    """A Decimal cost as a status holds it."""
    return agent_text.cost(float(value))
