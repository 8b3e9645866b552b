"""R71: an Execution's limits over all its runs: what the next phase is handed of them,
whether it may start at all, and what the Execution's status shows.

What the runs used is the Execution's ``status.usage``: its phases' usage, each phase's
attempts, revisions and graders summed. A phase inherited by a resumed Execution (R48) ran
under its parent's budget and is not counted again.
"""

from __future__ import annotations

from agentjobs.contract.limits import guard
from agentjobs.models.contract import SystemFailure, Usage
from agentjobs.models.limits import ExecutionBudget, ExecutionLimits, LimitUse


def for_phase(limits: ExecutionLimits | None, used: Usage | None) -> ExecutionBudget | None:
    """The limits, and what the phases before used of them, for the phase created next."""
    if limits is None:
        return None
    return ExecutionBudget(limits=limits, used_before=guard.Spent.of(used).record())


def refusal(limits: ExecutionLimits | None, used: Usage | None, phase: str) -> SystemFailure | None:
    """Why phase ``phase`` may not start: one of the limits is used up."""
    crossing = guard.spent_out(limits, guard.Spent.of(used))
    return crossing.not_started(f"phase {phase!r}") if crossing is not None else None


def uses(limits: ExecutionLimits | None, used: Usage | None) -> list[LimitUse]:
    """Each limit and how much of it the runs used, as the Execution's status shows them."""
    return guard.uses(limits, guard.Spent.of(used))
