"""The one backoff of every retry loop: doubling waits up to a cap, each jittered.

Cases: the nominal waits double from the first to the cap and stay there (however many
retries); a draw of 0 waits the whole nominal wait and a draw near 1 half of it; the loop's
waits follow the same sequence; jittered waits of many runners spread out; every retry loop
of the operator and its sidecars takes its waits from here (no loop doubles on its own).
"""

from __future__ import annotations

import ast
import pathlib
import random

from agentjobs.runtime import backoff
from agentjobs.runtime.backoff import Backoff

OPERATOR = pathlib.Path(__file__).parents[2] / "operator" / "agentjobs"
WAITS = ("sleep", "wait")


def test_the_nominal_waits_double_up_to_the_cap() -> None:
    waits = [Backoff(first=0.5, cap=5.0).nominal(retry) for retry in range(6)]
    assert waits == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert Backoff(first=1.0, cap=60.0).nominal(10_000) == 60.0


def test_a_wait_is_jittered_between_half_and_all_of_its_nominal_length() -> None:
    policy = Backoff(first=2.0, cap=60.0)
    assert policy.delay(1, draw=lambda: 0.0) == 4.0
    assert policy.delay(1, draw=lambda: 0.999) > 2.0
    assert policy.delay(1, draw=lambda: 0.999) < 2.01


def test_a_loops_waits_follow_the_same_sequence() -> None:
    waits = backoff.API.delays(draw=lambda: 0.0)
    assert [next(waits) for _ in range(8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]


def test_many_runners_meeting_one_outage_do_not_come_back_at_once() -> None:
    draw = random.Random(7).random
    waits = {round(backoff.API.delay(3, draw=draw), 3) for _ in range(1000)}
    assert len(waits) > 500  # of 4,000 possible values in milliseconds
    assert 4.0 <= min(waits) < 4.1 and 7.9 < max(waits) <= 8.0


def _doubles_on_its_own(node: ast.AST) -> bool:
    """``x * 2`` or ``2 ** x`` written into a wait: a backoff of its own."""
    if not isinstance(node, ast.BinOp):
        return False
    operands = (node.left, node.right)
    two = any(isinstance(o, ast.Constant) and o.value in (2, 2.0) for o in operands)
    return two and isinstance(node.op, ast.Mult | ast.Pow)


def test_no_retry_loop_keeps_a_backoff_of_its_own() -> None:
    found = []
    for path in OPERATOR.rglob("*.py"):
        if path.name == "backoff.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            waited = isinstance(node, ast.Call) and getattr(node.func, "attr", "") in WAITS
            assigned = isinstance(node, ast.Assign) and any(
                getattr(target, "id", "") in ("backoff", "delay") for target in node.targets
            )
            if (waited or assigned) and any(_doubles_on_its_own(n) for n in ast.walk(node)):
                found.append(f"{path.relative_to(OPERATOR)}:{getattr(node, 'lineno', 0)}")
    assert found == []
