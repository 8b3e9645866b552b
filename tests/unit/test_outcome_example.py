"""manifests/examples/outcome.yaml, offline (R37, R42): it is a valid Execution, and its
example agent needs exactly one revision to meet its rubric, graded by `agent.sh grade` (the
example grader, as the manifest runs it) with the operator's own revision section."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from agentjobs.contract.grading import revision
from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.kube import prompts
from agentjobs.models.contract import Grade, GradeState
from agentjobs.models.resources import ExecutionSpec

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples"
AGENT = EXAMPLES / "agent" / "agent.sh"
PATH = "/usr/bin:/bin"


def example() -> ExecutionSpec:
    manifest = yaml.safe_load((EXAMPLES / "outcome.yaml").read_text())
    return ExecutionSpec.model_validate(manifest["spec"])


def attempt(tmp_path: Path, prompt: str, number: int) -> Path:
    prompt_file = tmp_path / f"prompt-{number}.md"
    prompt_file.write_text(prompts.compose_prompt(prompt))
    output = tmp_path / f"output-{number}"
    environment = {
        "PATH": PATH,
        "AGENTJOBS_PROMPT_FILE": str(prompt_file),
        "AGENTJOBS_OUTPUT_DIR": str(output),
        "AGENTJOBS_PHASE": "notes",
        "EXAMPLE_AGENT_PACE": "0",
    }
    subprocess.run(["sh", str(AGENT)], env=environment, capture_output=True, check=True)
    return output


def grade(tmp_path: Path, rubric: str, graded: Path, args: list[str]) -> Grade:
    rubric_file = tmp_path / "rubric.md"
    rubric_file.write_text(rubric)
    environment = {
        "PATH": PATH,
        "AGENTJOBS_RUBRIC_FILE": str(rubric_file),
        "EXAMPLE_GRADER_INPUT_DIR": str(graded),
    }
    log = subprocess.run(
        ["sh", str(AGENT), *args], env=environment, capture_output=True, check=True
    ).stdout
    reader = GradeReader()
    reader.feed(log)
    return reader.close().grade


def test_the_outcome_example_passes_after_exactly_one_revision(tmp_path: Path) -> None:
    [phase] = example().phases
    assert phase.outcome is not None and phase.outcome.rubric is not None
    assert phase.prompt is not None
    args = phase.outcome.grader.args or []
    first = grade(tmp_path, phase.outcome.rubric, attempt(tmp_path, phase.prompt, 1), args)
    assert first.state is GradeState.NEEDS_REVISION
    assert [c.met for c in first.criteria] == [False, False]
    section = revision.revision_section(
        iteration=0,
        max_iterations=phase.outcome.max_iterations,
        explanation=first.explanation,
        criteria=first.criteria,
    )
    revised = attempt(tmp_path, phase.prompt.rstrip("\n") + "\n\n" + section, 2)
    second = grade(tmp_path, phase.outcome.rubric, revised, args)
    assert second.state is GradeState.SATISFIED
