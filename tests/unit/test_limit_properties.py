"""R70 as a property: for any transcript and any limits, a limit is passed at the first
event whose running spend exceeds it, whatever the chunking.

Cases: OpenCode steps with any tokens and costs, against sums kept by hand; any mix of
every CLI's spending events (Claude Code messages repeated or not, subagents, results,
Codex and Gemini CLI ends, text lines between them) read in any chunks, with or without an
Execution's budget partly spent before (R71), against the same events read one by one with
the limits checked after each; OpenCode steps under an Execution's token limit partly used
before, against the runs' sum kept by hand.
"""

from __future__ import annotations

import json
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentjobs.contract.limits import guard
from agentjobs.contract.reading.transcript_reader import PassedAt, TranscriptReader
from agentjobs.models.contract import TranscriptFormat
from agentjobs.models.limits import ExecutionLimits, ModelPrice, PriceTable
from tests.unit.test_reader_properties import split_at

TABLE = PriceTable(models={"m": ModelPrice(input="2", output="8", cache_read="0.5")})
counts = st.integers(min_value=0, max_value=5000)
limits = st.builds(
    ExecutionLimits,
    max_cost_usd=st.none() | st.decimals("0.0001", "0.2", places=4).map(str),
    max_tokens=st.none() | st.integers(min_value=1, max_value=40_000),
    max_turns=st.none() | st.integers(min_value=1, max_value=12),
)
cuts = st.lists(st.integers(min_value=0, max_value=100_000), max_size=40)
budgets = st.none() | st.builds(
    guard.Budget,
    limits,
    st.builds(
        guard.Spent,
        st.none() | st.decimals("0", "0.1", places=4),
        st.none() | st.integers(min_value=0, max_value=20_000),
        st.none() | st.integers(min_value=0, max_value=6),
    ),
).filter(lambda budget: guard.budget_spent(budget) is None)  # else no run starts (R71)


def line(event: dict[str, object]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def step(tokens_in: int, tokens_out: int, cost: Decimal) -> bytes:
    part = {
        "reason": "tool-calls",
        "cost": float(cost),
        "tokens": {"input": tokens_in, "output": tokens_out},
    }
    return line({"type": "step_finish", "sessionID": "s", "part": part})


STEP_START = line({"type": "step_start", "sessionID": "s", "part": {"type": "step-start"}})


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(
        st.tuples(counts, counts, st.decimals("0", "0.05", places=4)), min_size=1, max_size=15
    ),
    limits=limits,
    cuts=cuts,
)
def test_opencode_is_stopped_at_the_first_step_past_a_limit_by_hand_sums(
    steps: list[tuple[int, int, Decimal]], limits: ExecutionLimits, cuts: list[int]
) -> None:
    events: list[bytes] = []
    expected: tuple[guard.Limit, int] | None = None
    cost, tokens = Decimal(0), 0
    for turns, (tokens_in, tokens_out, step_cost) in enumerate(steps, start=1):
        events.append(STEP_START)
        if expected is None and limits.max_turns is not None and turns > limits.max_turns:
            expected = (guard.Limit.TURNS, len(events))
        events.append(step(tokens_in, tokens_out, step_cost))
        cost += Decimal(repr(float(step_cost)))
        tokens += tokens_in + tokens_out
        if expected is None:
            if limits.max_cost_usd is not None and cost > Decimal(limits.max_cost_usd):
                expected = (guard.Limit.COST, len(events))
            elif limits.max_tokens is not None and tokens > limits.max_tokens:
                expected = (guard.Limit.TOKENS, len(events))
    reader = TranscriptReader(TranscriptFormat.OPENCODE, limits=limits)
    for chunk in split_at(b"".join(events), cuts):
        reader.feed(chunk)
    passed = reader.limit_passed
    assert ((passed.crossing.limit, passed.line) if passed else None) == expected


def claude(message_id: str, out: int, *, sub: bool = False) -> bytes:
    message = {
        "id": message_id,
        "model": "m",
        "content": [{"type": "text", "text": "working"}],
        "usage": {"input_tokens": 3, "output_tokens": out, "cache_read_input_tokens": 100},
    }
    extra = {"parent_tool_use_id": "t"} if sub else {}
    return line({"type": "assistant", "message": message, **extra})


spending_events = st.one_of(
    st.builds(claude, st.sampled_from(["a", "b", "c", "d"]), counts),
    st.builds(lambda i, o: claude(i, o, sub=True), st.sampled_from(["s1", "s2"]), counts),
    st.builds(
        lambda o, c: line(
            {
                "type": "result",
                "subtype": "success",
                "usage": {"input_tokens": 5, "output_tokens": o},
                "total_cost_usd": c,
            }
        ),
        counts,
        st.floats(min_value=0, max_value=0.3),
    ),
    st.just(line({"type": "turn.started"})),
    st.builds(
        lambda i, o: line(
            {"type": "turn.completed", "usage": {"input_tokens": i, "output_tokens": o}}
        ),
        counts,
        counts,
    ),
    st.just(line({"type": "init", "model": "m"})),
    st.just(line({"type": "message", "role": "assistant", "content": "x", "delta": True})),
    st.builds(
        lambda i: line({"type": "result", "status": "success", "stats": {"input_tokens": i}}),
        counts,
    ),
    st.just(STEP_START),
    st.builds(lambda i: step(i, i, Decimal("0.001")), counts),
    st.just(b"plain words between events\n"),
)


def one_by_one(
    events: list[bytes],
    fmt: TranscriptFormat,
    limits: ExecutionLimits,
    budget: guard.Budget | None = None,
) -> PassedAt | None:
    """The oracle: each event fed on its own, the limits checked after each."""
    reader = TranscriptReader(fmt, prices=TABLE)
    for number, event in enumerate(events, start=1):
        reader.feed(event)
        spent = reader.spent()
        crossing = guard.passed(limits, spent) or guard.over_budget(budget, spent)
        if crossing is not None:
            return PassedAt(crossing, number)
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(spending_events, min_size=1, max_size=25),
    fmt=st.sampled_from([f for f in TranscriptFormat if f is not TranscriptFormat.TEXT]),
    limits=limits,
    budget=budgets,
    cuts=cuts,
)
def test_any_cli_is_stopped_at_the_first_event_past_a_limit_whatever_the_chunking(
    events: list[bytes],
    fmt: TranscriptFormat,
    limits: ExecutionLimits,
    budget: guard.Budget | None,
    cuts: list[int],
) -> None:
    reader = TranscriptReader(fmt, prices=TABLE, limits=limits, budget=budget)
    for chunk in split_at(b"".join(events), cuts):
        reader.feed(chunk)
    assert reader.limit_passed == one_by_one(events, fmt, limits, budget)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.tuples(counts, counts), min_size=1, max_size=15),
    run_tokens=st.none() | st.integers(min_value=1, max_value=40_000),
    allowed=st.integers(min_value=1, max_value=40_000),
    used_before=st.floats(min_value=0, max_value=1, exclude_max=True),
    cuts=cuts,
)
def test_an_execution_budget_is_passed_at_the_first_step_its_runs_together_pass(
    steps: list[tuple[int, int]],
    run_tokens: int | None,
    allowed: int,
    used_before: float,
    cuts: list[int],
) -> None:
    before = int(allowed * used_before)
    budget = guard.Budget(ExecutionLimits(max_tokens=allowed), guard.Spent(tokens=before))
    events: list[bytes] = []
    expected: tuple[bool, int] | None = None
    tokens = 0
    for tokens_in, tokens_out in steps:
        events.append(step(tokens_in, tokens_out, Decimal(0)))
        tokens += tokens_in + tokens_out
        if expected is None and run_tokens is not None and tokens > run_tokens:
            expected = (False, len(events))
        elif expected is None and before + tokens > allowed:
            expected = (True, len(events))
    reader = TranscriptReader(
        TranscriptFormat.OPENCODE, limits=ExecutionLimits(max_tokens=run_tokens), budget=budget
    )
    for chunk in split_at(b"".join(events), cuts):
        reader.feed(chunk)
    passed = reader.limit_passed
    assert ((passed.crossing.execution, passed.line) if passed else None) == expected
