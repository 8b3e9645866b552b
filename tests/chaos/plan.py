"""The Executions of a chaos run and the verdict each must end with, whatever happens.

Each Execution's agents print for a while and then report a verdict that names the
Execution, so that a verdict can be checked as exactly its own agent's. Some are
marked to be cut from outside (their pod or their Phase deleted while the agent
runs: they must end ``interrupted``) or deleted and applied again under their
name (the second incarnation's verdict must win). One in three works on a repository
(R65, R66): each of its phases commits its verdict's words on the work branch, which is
pushed at the end of every attempt, whatever the verdict.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tests import builders
from tests.integration.images import BUSYBOX, PYTHON_GIT

Fault = Literal["none", "delete-pod", "delete-phase", "reapply"]

_WORK = (
    'for i in $(seq 1 {lines}); do echo "{name} works on step $i of {lines}"; sleep {pause}; done'
)
_OUTPUT = 'echo "{name}" > "$AGENTJOBS_OUTPUT_DIR/result.txt"'
_COMMIT = (
    "git -C /workspace/service -c user.name=Agent -c user.email=agent@example.test "
    "commit -q --allow-empty -m '{comment}'"
)
SEED_COMMIT = "The repository's first commit"


@dataclass(frozen=True)
class Planned:
    """One Execution: how it runs, what is done to it, and how it must end."""

    name: str
    ending: Literal["completed", "refused", "crash"]
    fault: Fault
    phases: int
    # Where the Execution's repository is served (None: it has none).
    repository: str | None = None

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
            commit = self.comment(index, incarnation)
            script = "; ".join(
                (
                    *((_COMMIT.format(comment=commit),) if self.repository else ()),
                    _WORK.format(name=self.name, lines=lines, pause=pause),
                    _OUTPUT.format(name=self.name),
                    builders.echo_block(report),
                    "exit 3" if last and self.ending == "crash" else "true",
                )
            )
            phases.append({"name": f"p{index}", "prompt": "Work.", "args": [script]})
        spec: dict[str, Any] = {
            "defaults": {"image": BUSYBOX, "command": ["sh", "-c"]},
            "phases": phases,
        }
        if self.repository is not None:
            spec["defaults"]["image"] = PYTHON_GIT
            spec["repositories"] = [
                {
                    "name": "service",
                    "url": self.repository,
                    "credentialsSecret": {"name": "git"},
                    "push": {},
                }
            ]
        return {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": self.name},
            "spec": spec,
        }

    def pushed_commits(self, incarnation: int = 1) -> list[str]:
        """The work branch's commits at the end, newest first: each phase's once."""
        own = [self.comment(index, incarnation) for index in reversed(range(self.phases))]
        return [*own, SEED_COMMIT]


def plan(
    count: int, rng: random.Random, repository: Callable[[str], str] | None = None
) -> list[Planned]:
    """``count`` Executions; one in three is cut or re-applied from outside, in turn, and
    another one in three (never cut) works on the repository ``repository`` serves for it."""
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
                repository=(
                    repository(f"chaos-{number:03d}")
                    if repository is not None and number % 3 == 1
                    else None
                ),
            )
        )
    return planned
