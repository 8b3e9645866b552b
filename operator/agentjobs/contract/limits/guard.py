"""R67, R70, R71: which limit a run has passed, how close it is to the others, and how a
stop by a limit ends the attempt.

A limit is passed when what was used exceeds it: ``maxTokens: 1000`` lets a run use
1,000 tokens and stops it at the event that takes it past them; ``maxTurns: 3`` stops
the agent as its fourth turn starts. Cost is checked before tokens and tokens before
turns, so one event that passes two limits is told by the first. An Execution's limits
(R71) are passed by what its runs used together; once they have used all of one, nothing
more is started.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum
from typing import TypeVar

from agentjobs.models.contract import FailureKind, SystemFailure, Usage
from agentjobs.models.limits import BudgetUsed, ExecutionBudget, ExecutionLimits, Limits, LimitUse

APPROACHING = Decimal("0.8")  # R70: an Event when a run passes this share of a limit


class Limit(StrEnum):
    """A limit, by its field's name."""

    COST = "maxCostUsd"
    TOKENS = "maxTokens"
    TURNS = "maxTurns"
    IDLE = "idleSeconds"


BUDGETS = frozenset({Limit.COST, Limit.TOKENS})
_ENDS: dict[Limit, tuple[FailureKind, str]] = {
    Limit.COST: (FailureKind.BUDGET, "BudgetExceeded"),
    Limit.TOKENS: (FailureKind.BUDGET, "BudgetExceeded"),
    Limit.TURNS: (FailureKind.MAX_TURNS, "MaxTurns"),
    Limit.IDLE: (FailureKind.STUCK, "Stuck"),
}
_UNITS = {Limit.COST: "USD", Limit.TOKENS: "tokens", Limit.TURNS: "turns", Limit.IDLE: "s"}


@dataclass(frozen=True)
class Spent:
    """What a run (or an Execution's runs, summed) has used; None where not known."""

    cost_usd: Decimal | None = None
    tokens: int | None = None
    turns: int | None = None

    @staticmethod
    def of(usage: Usage | None, cost: Decimal | None = None) -> Spent:
        """From a usage (its cost, unless ``cost`` is given exactly)."""
        if cost is None and usage is not None and usage.cost_usd is not None:
            cost = Decimal(repr(usage.cost_usd))
        return Spent(cost, counted_tokens(usage), usage.turns if usage else None)

    @staticmethod
    def recorded(used: BudgetUsed) -> Spent:
        """From what a phase's spec says its Execution's earlier phases used (R71)."""
        cost = Decimal(used.cost_usd) if used.cost_usd is not None else None
        return Spent(cost, used.tokens, used.turns)

    def plus(self, other: Spent) -> Spent:
        return Spent(
            _sum(self.cost_usd, other.cost_usd),
            _sum(self.tokens, other.tokens),
            _sum(self.turns, other.turns),
        )

    def record(self) -> BudgetUsed:
        """As a phase's spec records it (money to nine decimals, as a limit is written)."""
        cost = None
        if self.cost_usd is not None:
            cost = format(self.cost_usd.quantize(Decimal("1e-9")).normalize(), "f")
        return BudgetUsed(cost_usd=cost, tokens=self.tokens, turns=self.turns)


@dataclass(frozen=True)
class Budget:
    """R71: an Execution's limits, and what was spent of them before the run being read:
    its earlier phases, and this phase's earlier attempts and graders."""

    limits: ExecutionLimits
    before: Spent

    @staticmethod
    def of(budget: ExecutionBudget | None, phase_usage: Usage | None) -> Budget | None:
        if budget is None:
            return None
        before = Spent.recorded(budget.used_before).plus(Spent.of(phase_usage))
        return Budget(budget.limits, before)


N = TypeVar("N", int, Decimal)


def _sum(left: N | None, right: N | None) -> N | None:
    if left is None:
        return right
    if right is None:
        return left
    return left + right


def counted_tokens(usage: Usage | None) -> int | None:
    """R67: input (with cache writes) and output tokens; cache reads are not counted."""
    if usage is None:
        return None
    return counted(usage.input_tokens, usage.cache_creation_input_tokens, usage.output_tokens)


def counted(input_tokens: int | None, cache_writes: int | None, output: int | None) -> int | None:
    """R67's count from its three parts (None: none reported)."""
    if input_tokens is None and cache_writes is None and output is None:
        return None
    return (input_tokens or 0) + (cache_writes or 0) + (output or 0)


@dataclass(frozen=True)
class Crossing:
    """R70: the limit a run passed, what it allowed and what was used then."""

    limit: Limit
    allowed: str
    used: str
    execution: bool = False  # R71: the Execution's limit, passed by its runs together

    @property
    def failure(self) -> SystemFailure:
        """The attempt's system failure: ``budget`` (blocked), ``max_turns`` or ``stuck``."""
        kind, code = _ENDS[self.limit]
        unit = _UNITS[self.limit]
        whose, who = ("the execution's", "its runs") if self.execution else ("its", "it")
        return SystemFailure(
            kind=kind,
            code=code,
            message=f"the agent was stopped by {whose} {self.limit} ({self.allowed} {unit}): "
            f"{who} had used {self.used} {unit}",
        )

    def not_started(self, what: str) -> SystemFailure:
        """R71: ``what`` (a phase, a grader) was not started, the Execution's limit spent."""
        kind, code = _ENDS[self.limit]
        unit = _UNITS[self.limit]
        return SystemFailure(
            kind=kind,
            code=code,
            message=f"{what} was not started: the execution's {self.limit} "
            f"({self.allowed} {unit}) is spent, its runs having used {self.used} {unit}",
        )


def watched(limits: Limits | None, budget: ExecutionBudget | None = None) -> bool:
    """Whether any limit is set, so the agent must be stoppable while it runs."""
    return budget is not None or (
        limits is not None
        and any(
            value is not None
            for value in (
                limits.max_cost_usd,
                limits.max_tokens,
                limits.max_turns,
                limits.idle_seconds,
            )
        )
    )


def stop_words(failure: SystemFailure | None) -> str | None:
    """What a limit's stop says, or None for any other failure."""
    if failure is None or (failure.kind, failure.code) not in _ENDS.values():
        return None
    return failure.message


def stopped_by(terminal_reason: str | None) -> Limit | None:
    """The limit an outcome's terminal reason says stopped its attempt, or None (a budget
    stop reads as the cost limit)."""
    for limit, (_, code) in _ENDS.items():
        if code == terminal_reason:
            return limit
    return None


def _allowed(limits: ExecutionLimits) -> list[tuple[Limit, Decimal]]:
    given = (
        (Limit.COST, limits.max_cost_usd),
        (Limit.TOKENS, limits.max_tokens),
        (Limit.TURNS, limits.max_turns),
    )
    return [(limit, Decimal(value)) for limit, value in given if value is not None]


def _used(spent: Spent, limit: Limit) -> Decimal | None:
    value = {Limit.COST: spent.cost_usd, Limit.TOKENS: spent.tokens, Limit.TURNS: spent.turns}
    used = value.get(limit)
    return None if used is None else Decimal(used)


def passed(limits: ExecutionLimits | None, spent: Spent) -> Crossing | None:
    """The first limit ``spent`` exceeds, or None."""
    return _first(limits, spent, reached=False)


def _first(limits: ExecutionLimits | None, spent: Spent, *, reached: bool) -> Crossing | None:
    """The first limit ``spent`` exceeds, or with ``reached`` has used all of."""
    for limit, allowed in _allowed(limits) if limits else ():
        used = _used(spent, limit)
        if used is not None and (used > allowed or (reached and used == allowed)):
            return Crossing(limit, _text(allowed), _text(used), execution=reached)
    return None


def thresholds(
    limits: ExecutionLimits | None, budget: Budget | None
) -> tuple[tuple[Limit, Decimal], ...]:
    """For each limit, the least a run's own use must exceed to pass it or, with what the
    Execution's runs used before, the Execution's: a reader checks these after every event
    that spends, so they are worked out once (the crossing itself is then told by
    :func:`passed` and :func:`over_budget`)."""
    least: dict[Limit, Decimal] = dict(_allowed(limits)) if limits else {}
    if budget is not None:
        for limit, allowed in _allowed(budget.limits):
            left = allowed - (_used(budget.before, limit) or 0)
            least[limit] = min(least.get(limit, left), left)
    return tuple(least.items())


def over_budget(budget: Budget | None, spent: Spent) -> Crossing | None:
    """R71: the first of the Execution's limits that its runs, with ``spent``, passed."""
    crossing = passed(budget.limits, budget.before.plus(spent)) if budget else None
    return replace(crossing, execution=True) if crossing else None


def budget_spent(budget: Budget | None) -> Crossing | None:
    """R71: the first of the Execution's limits its runs so far have used all of."""
    return spent_out(budget.limits, budget.before) if budget else None


def spent_out(limits: ExecutionLimits | None, spent: Spent) -> Crossing | None:
    """R71: the first of an Execution's limits ``spent`` has used all of, or None."""
    return _first(limits, spent, reached=True)


def approaching_any(
    limits: ExecutionLimits | None, budget: Budget | None, spent: Spent
) -> list[tuple[Limit, bool]]:
    """Each limit whose 80% the run used, or the Execution's runs together (then True)."""
    near = [(limit, False) for limit in approaching(limits, spent)]
    if budget is not None:
        together = budget.before.plus(spent)
        near += [(limit, True) for limit in approaching(budget.limits, together)]
    return near


def approaching(limits: ExecutionLimits | None, spent: Spent) -> list[Limit]:
    """The limits ``spent`` has used at least 80% of."""
    near = []
    for limit, allowed in _allowed(limits) if limits else ():
        used = _used(spent, limit)
        if used is not None and used >= allowed * APPROACHING:
            near.append(limit)
    return near


def idle(limits: Limits | None, silent_seconds: float) -> Crossing | None:
    """R70: the agent has printed nothing for longer than its ``idleSeconds``."""
    if limits is None or limits.idle_seconds is None or silent_seconds <= limits.idle_seconds:
        return None
    return Crossing(Limit.IDLE, str(limits.idle_seconds), str(int(silent_seconds)))


def uses(limits: ExecutionLimits | None, spent: Spent) -> list[LimitUse]:
    """Each spend limit set and how much of it was used, as the status shows them."""
    return [
        LimitUse(limit=limit.value, allowed=_text(allowed), used=_opt_text(_used(spent, limit)))
        for limit, allowed in (_allowed(limits) if limits else ())
    ]


def _opt_text(value: Decimal | None) -> str | None:
    return None if value is None else _text(value)


def _text(value: Decimal) -> str:
    """A number as it reads best: integers whole, money to the cent's hundredth."""
    if value == value.to_integral_value():
        return str(value.quantize(Decimal(1)))
    return str(value.quantize(Decimal("0.0001")).normalize())
