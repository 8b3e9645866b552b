"""R67-R70 as pure functions: what each CLI's transcript spends event by event, the cost
from the price table, and which limit a run passes where.

Cases: each CLI's usage and turns as its events report them (Claude Code per message, not
per repeated block; OpenCode per step; Codex and Gemini CLI at the end); a reported total
replaces the running sum; a model without a price gives no cost and says so, never a
partial one; each limit is passed only when exceeded, tokens without cache reads; the
stop's failure for each limit; the CRD refuses maxTurns on a text transcript.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from agentjobs.contract.limits import guard, prices
from agentjobs.contract.limits.guard import Limit, Spent
from agentjobs.contract.limits.meter import UsageMeter
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.contract.text.usage import Spend
from agentjobs.models.contract import FailureKind, TranscriptFormat, Usage
from agentjobs.models.limits import ExecutionLimits, Limits, ModelPrice, PriceTable
from agentjobs.models.resources import ExecutionSpec, PhaseSpec

SONNET = "claude-sonnet-4-5-20250929"
TABLE = PriceTable(
    models={
        SONNET: ModelPrice(input="3", output="15", cache_read="0.30", cache_write="3.75"),
        "gemini-2.5-pro": ModelPrice(input="1.25", output="10"),
    }
)


def line(event: dict[str, object]) -> bytes:
    return (json.dumps(event) + "\n").encode()


def claude_message(message_id: str, *, output: int, model: str = SONNET, **extra: object) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": output, "cache_read_input_tokens": 1000}
    message = {"id": message_id, "model": model, "content": [{"type": "text", "text": "x"}]}
    return line({"type": "assistant", "message": {**message, "usage": usage}, **extra})


def claude_result(cost: float, output: int) -> bytes:
    usage = {"input_tokens": 20, "output_tokens": output}
    return line({"type": "result", "subtype": "success", "usage": usage, "total_cost_usd": cost})


def reader_of(fmt: TranscriptFormat, *events: bytes, **kwargs: object) -> TranscriptReader:
    reader = TranscriptReader(fmt, **kwargs)  # type: ignore[arg-type]
    for event in events:
        reader.feed(event)
    return reader


def test_claude_code_counts_each_message_once_and_its_turns_live() -> None:
    reader = reader_of(
        TranscriptFormat.CLAUDE_CODE,
        claude_message("m1", output=5),
        claude_message("m1", output=5),  # a second block of the same message
        claude_message("m2", output=7),
        prices=TABLE,
    )
    spent = reader.spent()
    assert spent.tokens == 10 + 5 + 10 + 7
    assert spent.turns == 2
    # 20 input at $3, 12 output at $15, 2000 cache reads at $0.30 (per million)
    assert spent.cost_usd == Decimal("0.00006") + Decimal("0.00018") + Decimal("0.0006")


def test_a_repeated_message_adds_only_what_its_usage_grew_by() -> None:
    reader = reader_of(
        TranscriptFormat.CLAUDE_CODE,
        claude_message("m1", output=5),
        claude_message("m1", output=50),
    )
    assert reader.spent().tokens == 10 + 50


def test_a_subagents_messages_are_spent_but_are_no_turns_of_the_agent() -> None:
    reader = reader_of(
        TranscriptFormat.CLAUDE_CODE,
        claude_message("m1", output=5),
        claude_message("s1", output=5, parent_tool_use_id="tool_1"),
        claude_message("s2", output=5, parent_tool_use_id="tool_1"),
    )
    assert reader.spent().turns == 1
    assert reader.spent().tokens == 45


def test_claude_codes_result_replaces_the_running_sum_with_its_totals() -> None:
    verdict = reader_of(
        TranscriptFormat.CLAUDE_CODE,
        claude_message("m1", output=5),
        claude_result(0.25, output=40),
        prices=TABLE,
    ).close()
    # the fields it reports are replaced; the cache reads it does not report are kept
    assert verdict.usage == Usage(
        input_tokens=20, output_tokens=40, cache_read_input_tokens=1000, cost_usd=0.25, turns=1
    )


def test_a_run_stopped_before_its_result_keeps_what_its_messages_spent() -> None:
    verdict = reader_of(TranscriptFormat.CLAUDE_CODE, claude_message("m1", output=5)).close()
    assert verdict.usage is not None
    assert verdict.usage.output_tokens == 5
    assert verdict.usage.cost_usd is None  # no table, no cost: never a guessed one


def test_an_unpriced_model_gives_no_cost_and_a_warning() -> None:
    verdict = reader_of(
        TranscriptFormat.CLAUDE_CODE,
        claude_message("m1", output=5),
        claude_message("m2", output=5, model="claude-unlisted"),
        prices=TABLE,
    ).close()
    assert verdict.usage is not None and verdict.usage.cost_usd is None
    assert any("claude-unlisted" in warning for warning in verdict.report.warnings)


def test_opencode_spends_per_step_and_counts_steps_as_turns() -> None:
    def step(reason: str, cost: float) -> bytes:
        part = {"reason": reason, "cost": cost, "tokens": {"input": 100, "output": 10}}
        return line({"type": "step_finish", "sessionID": "s", "part": part})

    start = line({"type": "step_start", "sessionID": "s", "part": {"type": "step-start"}})
    reader = reader_of(TranscriptFormat.OPENCODE, start, step("tool-calls", 0.5), start)
    assert reader.spent() == Spent(Decimal("0.5"), 110, 2)
    reader.feed(step("stop", 0.25))
    assert reader.spent() == Spent(Decimal("0.75"), 220, 2)


def test_codex_spends_at_the_end_of_its_turn_without_a_model_to_price() -> None:
    reader = reader_of(TranscriptFormat.CODEX, line({"type": "turn.started"}), prices=TABLE)
    assert reader.spent() == Spent(None, None, 1)
    usage = {"input_tokens": 600, "cached_input_tokens": 500, "output_tokens": 20}
    reader.feed(line({"type": "turn.completed", "usage": usage}))
    assert reader.spent() == Spent(None, 120, 1)
    assert "names no model" in " ".join(reader.close().report.warnings)


def test_gemini_cli_is_priced_by_its_init_model_at_its_result() -> None:
    init = line({"type": "init", "model": "gemini-2.5-pro"})
    delta = line({"type": "message", "role": "assistant", "content": "a", "delta": True})
    tool = line({"type": "tool_use", "tool_name": "read_file", "tool_id": "t1"})
    stats = {"input_tokens": 1_000_000, "output_tokens": 100_000, "cached": 0}
    result = line({"type": "result", "status": "success", "stats": stats})
    reader = reader_of(TranscriptFormat.GEMINI_CLI, init, delta, delta, tool, delta, prices=TABLE)
    assert reader.spent() == Spent(None, None, 2)
    reader.feed(result)
    assert reader.spent() == Spent(Decimal("2.25"), 1_100_000, 2)


def test_a_text_log_spends_nothing_known() -> None:
    assert reader_of(TranscriptFormat.TEXT, b"hello\n").spent() == Spent()


def test_prices_count_cache_reads_and_writes_at_their_own_rates() -> None:
    usage = Spend(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_input_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
    )
    assert prices.cost(usage, TABLE.models[SONNET]) == Decimal("22.05")
    assert prices.cost(usage, TABLE.models["gemini-2.5-pro"]) == Decimal("13.75")


def test_a_price_table_is_read_from_yaml_and_a_bad_one_says_why() -> None:
    table = prices.parse(f"models:\n  {SONNET}:\n    input: '3'\n    output: '15'\n")
    assert table.models[SONNET].output == "15"
    with pytest.raises(prices.PriceTableError, match="not valid"):
        prices.parse("models:\n  m:\n    input: cheap\n    output: '1'\n")
    with pytest.raises(prices.PriceTableError, match="not YAML"):
        prices.parse("models: [")


def test_a_total_without_a_cost_is_priced_by_the_last_model() -> None:
    meter = UsageMeter(TABLE)
    meter.observe(model=SONNET)
    meter.observe(usage_total=Spend(input_tokens=1_000_000))
    assert meter.cost == Decimal(3)


@pytest.mark.parametrize(
    ("limits", "spent", "passed"),
    [
        (ExecutionLimits(max_tokens=100), Spent(tokens=100), None),
        (ExecutionLimits(max_tokens=100), Spent(tokens=101), Limit.TOKENS),
        (ExecutionLimits(max_cost_usd="0.50"), Spent(cost_usd=Decimal("0.5")), None),
        (ExecutionLimits(max_cost_usd="0.50"), Spent(cost_usd=Decimal("0.5001")), Limit.COST),
        (ExecutionLimits(max_turns=3), Spent(turns=3), None),
        (ExecutionLimits(max_turns=3), Spent(turns=4), Limit.TURNS),
        (ExecutionLimits(max_cost_usd="1"), Spent(tokens=10**9), None),  # cost unknown
        (
            ExecutionLimits(max_cost_usd="1", max_tokens=5, max_turns=1),
            Spent(Decimal(2), 6, 2),
            Limit.COST,
        ),
        (ExecutionLimits(max_tokens=5, max_turns=1), Spent(None, 6, 2), Limit.TOKENS),
    ],
)
def test_a_limit_is_passed_only_when_exceeded_cost_first(
    limits: ExecutionLimits, spent: Spent, passed: Limit | None
) -> None:
    crossing = guard.passed(limits, spent)
    assert (crossing.limit if crossing else None) is passed


def test_tokens_count_input_cache_writes_and_output_but_not_cache_reads() -> None:
    usage = Usage(
        input_tokens=1,
        cache_creation_input_tokens=10,
        output_tokens=100,
        cache_read_input_tokens=1000,
    )
    assert guard.counted_tokens(usage) == 111
    assert guard.counted_tokens(Usage(cost_usd=1.0)) is None


def test_a_run_is_approaching_a_limit_from_four_fifths_of_it() -> None:
    limits = ExecutionLimits(max_tokens=100, max_turns=10)
    assert guard.approaching(limits, Spent(tokens=79, turns=8)) == [Limit.TURNS]
    assert guard.approaching(limits, Spent(tokens=80, turns=1)) == [Limit.TOKENS]


def test_idle_is_passed_only_after_the_whole_silence() -> None:
    limits = Limits(idle_seconds=30)
    assert guard.idle(limits, 30.0) is None
    crossing = guard.idle(limits, 31.5)
    assert crossing is not None and crossing.failure.code == "Stuck"
    assert guard.idle(Limits(), 10**6) is None


@pytest.mark.parametrize(
    ("limit", "kind", "code"),
    [
        (Limit.COST, FailureKind.BUDGET, "BudgetExceeded"),
        (Limit.TOKENS, FailureKind.BUDGET, "BudgetExceeded"),
        (Limit.TURNS, FailureKind.MAX_TURNS, "MaxTurns"),
        (Limit.IDLE, FailureKind.STUCK, "Stuck"),
    ],
)
def test_each_limit_ends_its_attempt_with_its_own_failure(
    limit: Limit, kind: FailureKind, code: str
) -> None:
    failure = guard.Crossing(limit, "5", "6").failure
    assert (failure.kind, failure.code) == (kind, code)
    assert limit.value in failure.message


def test_the_status_shows_each_limit_and_its_use() -> None:
    uses = guard.uses(ExecutionLimits(max_cost_usd="2.50", max_tokens=1000), Spent(None, 250, 3))
    assert [(u.limit, u.allowed, u.used) for u in uses] == [
        ("maxCostUsd", "2.5", None),
        ("maxTokens", "1000", "250"),
    ]


def test_limits_and_spend_add_up_over_an_executions_runs() -> None:
    total = Spent(Decimal("0.5"), 10, 1).plus(Spent(None, 5, None))
    assert total == Spent(Decimal("0.5"), 15, 1)


def test_a_cost_limit_is_a_decimal_string() -> None:
    assert Limits(max_cost_usd="12.50").max_cost_usd == "12.50"
    with pytest.raises(ValueError, match="pattern"):
        Limits(max_cost_usd="-1")


def test_max_turns_is_refused_for_a_text_transcript_in_the_crd() -> None:
    rules = json.dumps(ExecutionSpec.model_json_schema()) + json.dumps(
        PhaseSpec.model_json_schema()
    )
    assert rules.count("limits.maxTurns needs an agent CLI") == 2


def test_a_log_naming_endless_unpriced_models_keeps_a_few_short_names() -> None:
    meter = UsageMeter(TABLE)
    for number in range(1000):
        meter.observe(usage=Spend(input_tokens=1), model=f"m{number}" + "x" * 1000)
    assert meter.cost is None
    assert len(meter.unpriced) <= 8
    assert all(len(name.encode()) <= 200 for name in meter.unpriced)
