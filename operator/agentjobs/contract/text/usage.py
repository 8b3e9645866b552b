"""R13f: summing the tokens and cost agent CLIs report.

A count no event reported stays None ("not reported"), never 0: a CLI that
prints no cost has not said its run was free.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import NamedTuple

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


class Spend(NamedTuple):
    """What one transcript event reports spending, as already-checked plain numbers.

    Not a :class:`Usage`: one is made for every event that spends, at the reader's speed,
    while the run's :class:`Usage` is built once, from the sum, when a verdict asks for it.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cost_usd: float | None = None

    def counts(self) -> tuple[int | None, int | None, int | None, int | None]:
        """The token counts, in :data:`COUNTS` order."""
        return (
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        )


# The token counts of a :class:`Spend`, in its order.
COUNTS = Spend._fields[:4]


def growth(before: Spend | None, now: Spend | None) -> Spend | None:
    """What ``now`` adds to ``before``, field by field (a count never shrinks); None when
    nothing grew."""
    if now is None:
        return None
    if before is None:
        return now
    grown = [
        new - (old or 0) if new is not None and new > (old or 0) else None
        for new, old in zip(now, before, strict=True)
    ]
    return Spend._make(grown) if any(value is not None for value in grown) else None


def larger(left: Spend | None, right: Spend | None) -> Spend | None:
    """The larger of the two, field by field."""
    if left is None or right is None:
        return left or right
    return Spend._make(
        max((v for v in pair if v is not None), default=None)
        for pair in zip(left, right, strict=True)
    )


def dollars(value: Decimal) -> float | None:
    """A Decimal cost as a status holds it."""
    return agent_text.cost(float(value))
