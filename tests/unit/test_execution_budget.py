"""R71: an Execution's limits over all its runs, without a cluster.

Cases: the next phase is handed the limits and what the phases before it used; a phase
whose Execution has used all of one limit is not created, the Execution ending failed and
blocked by budget, naming that phase; the Execution's status shows each limit's use; a run
read against the budget is stopped at the first event that takes the runs together past
it, the stop naming the Execution's limit; a grader is not started once the budget is spent;
and what was used survives the trip through a phase's spec.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from agentjobs.contract.execution import budget, execution_plan
from agentjobs.contract.execution.execution_plan import ChildPhase
from agentjobs.contract.limits import guard
from agentjobs.contract.limits.guard import Limit, Spent
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import FailureKind, TranscriptFormat, Usage
from agentjobs.models.limits import BudgetUsed, ExecutionBudget, ExecutionLimits, Limits
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec

NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)


def spec(**limits: Any) -> ExecutionSpec:
    return ExecutionSpec.model_validate(
        {
            "defaults": {"image": "agent:1"},
            "phases": [{"name": "plan", "prompt": "p"}, {"name": "build", "prompt": "b"}],
            "limits": limits or None,
        }
    )


def completed(index: int, execution: ExecutionSpec, usage: dict[str, Any]) -> ChildPhase:
    phase = phase_status.phase_spec(execution, execution_name="demo", index=index)
    status = PhaseResourceStatus.model_validate(
        {"status": "completed", "artifactCount": 1, "usage": usage}
    )
    return ChildPhase(f"demo-{index}-{phase.name}", phase, status)


def plan(execution: ExecutionSpec, *children: ChildPhase) -> execution_plan.ExecutionPlan:
    return execution_plan.plan_execution(
        execution, list(children), previous=ExecutionResourceStatus(), generation=1, now=NOW
    )


def test_the_next_phase_is_handed_the_limits_and_what_the_phases_before_used() -> None:
    execution = spec(maxCostUsd="1.00", maxTokens=5000)
    first = plan(execution)
    assert first.budget == ExecutionBudget(
        limits=ExecutionLimits(max_cost_usd="1.00", max_tokens=5000)
    )
    used = {"inputTokens": 1000, "outputTokens": 200, "costUsd": 0.4125}
    second = plan(execution, completed(0, execution, used))
    assert second.create_index == 1 and second.budget is not None
    assert second.budget.used_before == BudgetUsed(cost_usd="0.4125", tokens=1200)
    created = phase_status.phase_spec(
        execution, execution_name="demo", index=1, budget=second.budget
    )
    assert created.budget == second.budget
    assert [(u.limit, u.allowed, u.used) for u in second.status.limits] == [
        ("maxCostUsd", "1", "0.4125"),
        ("maxTokens", "5000", "1200"),
    ]


def test_an_execution_without_limits_hands_no_budget_and_shows_none() -> None:
    execution = spec()
    result = plan(execution, completed(0, execution, {"costUsd": 99.0}))
    assert (result.create_index, result.budget, result.status.limits) == (1, None, [])


def test_a_phase_whose_budget_is_spent_is_not_started_and_the_execution_is_blocked() -> None:
    execution = spec(maxCostUsd="0.50")
    result = plan(execution, completed(0, execution, {"costUsd": 0.5}))
    status, outcome = result.status, result.status.task_outcome
    assert result.create_index is None and outcome is not None
    assert (status.status, status.failure_classification) == ("failed", "platform")
    assert status.current_phase == "build"
    assert (outcome.status, outcome.terminal_reason, outcome.needs_user_action) == (
        "blocked",
        "BudgetExceeded",
        True,
    )
    (blocker,) = outcome.blockers
    assert (blocker.type, blocker.recoverable) == (FailureKind.BUDGET.value, True)
    assert blocker.message == (
        "phase 'build' was not started: the execution's maxCostUsd (0.5 USD) is spent, "
        "its runs having used 0.5 USD"
    )
    # The same phases give the same status: the reconcile settles.
    again = execution_plan.plan_execution(
        execution,
        [completed(0, execution, {"costUsd": 0.5})],
        previous=status,
        generation=1,
        now=NOW,
    )
    assert again.status == status


def test_a_phase_is_started_while_some_budget_is_left() -> None:
    execution = spec(maxTokens=1000, maxTurns=10)
    result = plan(execution, completed(0, execution, {"inputTokens": 999, "turns": 9}))
    assert (result.create_index, result.status.status) == (1, "running")


def line(event: dict[str, object]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def claude_message(message_id: str, output: int) -> bytes:
    usage = {"input_tokens": 0, "output_tokens": output}
    message = {"id": message_id, "model": "m", "content": [{"type": "text", "text": "x"}]}
    return line({"type": "assistant", "message": {**message, "usage": usage}})


def test_a_run_is_stopped_when_the_runs_together_pass_the_executions_limit() -> None:
    handed = ExecutionBudget(
        limits=ExecutionLimits(max_tokens=1000), used_before=BudgetUsed(tokens=600)
    )
    # This phase's earlier attempt used 200: 200 are left for this run.
    reader = TranscriptReader(
        TranscriptFormat.CLAUDE_CODE,
        limits=Limits(max_tokens=5000),
        budget=guard.Budget.of(handed, Usage(output_tokens=200)),
    )
    reader.feed(claude_message("m1", 150))
    assert reader.limit_passed is None
    reader.feed(claude_message("m2", 100))
    passed = reader.limit_passed
    assert passed is not None and passed.line == 2
    assert (passed.crossing.limit, passed.crossing.execution) == (Limit.TOKENS, True)
    failure = passed.crossing.failure
    assert (failure.kind, failure.code) == (FailureKind.BUDGET, "BudgetExceeded")
    assert failure.message == (
        "the agent was stopped by the execution's maxTokens (1000 tokens): "
        "its runs had used 1050 tokens"
    )


def test_the_runs_own_limit_is_told_first_when_both_are_passed() -> None:
    handed = ExecutionBudget(limits=ExecutionLimits(max_tokens=100))
    reader = TranscriptReader(
        TranscriptFormat.CLAUDE_CODE,
        limits=Limits(max_tokens=50),
        budget=guard.Budget.of(handed, None),
    )
    reader.feed(claude_message("m1", 500))
    assert reader.limit_passed is not None
    assert reader.limit_passed.crossing.failure.message.startswith(
        "the agent was stopped by its maxTokens"
    )


def test_a_grader_is_not_started_once_the_graded_attempt_spent_the_budget() -> None:
    handed = ExecutionBudget(limits=ExecutionLimits(max_cost_usd="1"))
    assert guard.budget_spent(guard.Budget.of(handed, Usage(cost_usd=0.99))) is None
    spent = guard.budget_spent(guard.Budget.of(handed, Usage(cost_usd=1.0)))
    assert spent is not None
    refused = spent.not_started("grader 'demo-0-plan-g1'")
    assert refused.kind is FailureKind.BUDGET
    assert refused.message.startswith("grader 'demo-0-plan-g1' was not started")


def test_what_was_used_survives_a_phases_spec_exactly() -> None:
    spent = Spent(Decimal("0.123456789"), 10, 2).plus(Spent(Decimal("100"), None, None))
    assert Spent.recorded(spent.record()) == spent
    assert spent.record().cost_usd == "100.123456789"
    assert budget.for_phase(None, Usage(cost_usd=1.0)) is None
