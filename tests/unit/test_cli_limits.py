"""`agentjobs report --max-cost-usd/--max-tokens/--max-turns`: trying limits on a stored
transcript (R70).

Cases: the line a limit would have stopped the run at, with what was used then, for each
limit; no limit passed prints a null stop and each limit's use; a cost from a price table;
a limit or a price table that cannot be used exits 2 with one line saying why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjobs import cli


def line(event: dict[str, object]) -> str:
    return json.dumps(event) + "\n"


def message(message_id: str, output: int) -> str:
    usage = {"input_tokens": 100, "output_tokens": output}
    body = {"id": message_id, "model": "claude-x", "content": [{"type": "text", "text": "ok"}]}
    return line({"type": "assistant", "message": {**body, "usage": usage}})


TRANSCRIPT = (
    line({"type": "system", "subtype": "init"})
    + message("m1", 50)  # line 2: 150 tokens, turn 1
    + message("m2", 50)  # line 3: 300 tokens, turn 2
    + message("m3", 50)  # line 4: 450 tokens, turn 3
    + line({"type": "result", "subtype": "success", "usage": {}, "total_cost_usd": 0.9})
)


def report(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> dict[str, Any]:
    log = tmp_path / "t.jsonl"
    log.write_text(TRANSCRIPT)
    assert cli.main(["report", "--format", "claude-code", *args, str(log)]) == 0
    printed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return printed


@pytest.mark.parametrize(
    ("args", "stop"),
    [
        (["--max-tokens", "299"], {"line": 3, "limit": "maxTokens", "used": "300"}),
        (["--max-turns", "2"], {"line": 4, "limit": "maxTurns", "used": "3"}),
        (["--max-cost-usd", "0.5"], {"line": 5, "limit": "maxCostUsd", "used": "0.9"}),
    ],
)
def test_the_stop_is_printed_at_the_event_that_passed_the_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], stop: dict[str, Any]
) -> None:
    printed = report(capsys, tmp_path, *args)
    assert printed["stopped_at"].items() >= stop.items()


def test_limits_not_passed_print_no_stop_and_their_use(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = report(capsys, tmp_path, "--max-tokens", "10000", "--max-turns", "3")
    assert printed["stopped_at"] is None
    assert printed["usage"]["turns"] == 3
    assert [use["used"] for use in printed["limits"]] == ["450", "3"]


def test_a_price_table_costs_the_messages_before_the_cli_reports_its_total(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    table = tmp_path / "prices.yaml"
    table.write_text("models:\n  claude-x: {input: '1000', output: '1000'}\n")
    printed = report(capsys, tmp_path, "--max-cost-usd", "0.2", "--price-table", str(table))
    assert printed["stopped_at"]["line"] == 3  # 300 tokens at $1000 a million: $0.30


def test_without_limits_nothing_about_them_is_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "stopped_at" not in report(capsys, tmp_path)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--max-cost-usd", "ten"], "maxCostUsd"),
        (["--max-turns", "0"], "maxTurns"),
        (["--price-table", "PRICES"], "not valid"),
    ],
)
def test_a_limit_that_cannot_be_used_exits_2_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], said: str
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  m: {input: free}\n")
    log = tmp_path / "t.jsonl"
    log.write_text(TRANSCRIPT)
    args = [str(prices) if a == "PRICES" else a for a in args]
    assert cli.main(["report", "--format", "claude-code", *args, str(log)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err
