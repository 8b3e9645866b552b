"""The Executions of a chaos run and the verdict each must end with, whatever happens.

Each Execution's agents print for a while and then report a verdict that names the
Execution, so that a verdict can be checked as exactly its own agent's. Some are
marked to be cut from outside (their pod or their Phase deleted while the agent
runs: they must end ``interrupted``) or deleted and applied again under their
name (the second incarnation's verdict must win).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

from tests import builders
from tests.integration.images import BUSYBOX

Fault = Literal["none", "delete-pod", "delete-phase", "reapply"]

_WORK = (
    'for i in $(seq 1 {lines}); do echo "{name} works on step $i of {lines}"; sleep {pause}; done'
)
_OUTPUT = 'echo "{name}" > "$AGENTJOBS_OUTPUT_DIR/result.txt"'


@dataclass(frozen=True)
class Planned:
    """One Execution: how it runs, what is done to it, and how it must end."""

    name: str
    ending: Literal["completed", "refused", "crash"]
    fault: Fault
    phases: int

    @property
    def expected_status(self) -> str:
        if self.fault in ("delete-pod", "delete-phase"):
            return "interrupted"
        return "completed" if self.ending == "completed" else "failed"

    def comment(self, phase: int, incarnation: int = 1) -> str:
        return f"{self.name} phase {phase} incarnation {incarnation}"

    def manifest(self, incarnation: int = 1) -> dict[str, Any]:
        # A first incarnation that will be cut or re-applied runs long enough to be caught.
        long = self.fault != "none" and incarnation == 1
        lines, pause = (60, 1) if long else (12, 0.25)
        phases = []
        for index in range(self.phases):
            last = index == self.phases - 1
            refused = last and self.ending == "refused"
            reason = {"failure_reason": "task"} if refused else {}
            report = builders.report(not refused, self.comment(index, incarnation), **reason)
            script = "; ".join(
                (
                    _WORK.format(name=self.name, lines=lines, pause=pause),
                    _OUTPUT.format(name=self.name),
                    builders.echo_block(report),
                    "exit 3" if last and self.ending == "crash" else "true",
                )
            )
            phases.append({"name": f"p{index}", "prompt": "Work.", "args": [script]})
        return {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": self.name},
            "spec": {
                "defaults": {"image": BUSYBOX, "command": ["sh", "-c"]},
                "phases": phases,
            },
        }


def plan(count: int, rng: random.Random) -> list[Planned]:
    """``count`` Executions; one in three is cut or re-applied from outside, in turn."""
    planned = []
    faults: list[Fault] = ["delete-pod", "delete-phase", "reapply"]
    for number in range(count):
        fault: Fault = faults[(number // 3 - 1) % 3] if number % 3 == 2 else "none"
        ending = rng.choice(["completed", "completed", "refused", "crash"])
        planned.append(
            Planned(
                name=f"chaos-{number:03d}",
                ending="completed" if fault != "none" else ending,  # type: ignore[arg-type]
                fault=fault,
                phases=rng.choice([1, 1, 2]),
            )
        )
    return planned
