"""One revise loop of the examples, offline (R42): the example agent, the example grader and
the revision section the operator appends to the prompt.

Cases: the agent's first deliverable misses a rubric criterion, so the grade needs revision;
given the revision section built from that grade, the agent's next deliverable meets it and
the grade is satisfied; the prompt's own instructions after the section are not taken for
feedback.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentjobs.contract.grading import revision
from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.kube import prompts
from agentjobs.models.contract import Grade, GradeState

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples" / "agent"
RUBRIC = "## Coverage\n- names the release: `Release 1.2`\n"
PATH = "/usr/bin:/bin"


def run_agent(tmp_path: Path, prompt: str, iteration: int) -> Path:
    prompt_file = tmp_path / f"prompt-{iteration}.md"
    prompt_file.write_text(prompt)
    output = tmp_path / f"output-{iteration}"
    subprocess.run(
        ["sh", str(EXAMPLES / "agent.sh")],
        env={
            "PATH": PATH,
            "AGENTJOBS_PROMPT_FILE": str(prompt_file),
            "AGENTJOBS_OUTPUT_DIR": str(output),
            "AGENTJOBS_PHASE": "notes",
            "EXAMPLE_AGENT_PACE": "0",
        },
        capture_output=True,
        check=True,
    )
    return output


def run_grader(tmp_path: Path, artifacts: Path) -> Grade:
    rubric = tmp_path / "rubric.md"
    rubric.write_text(RUBRIC)
    completed = subprocess.run(
        ["sh", str(EXAMPLES / "grade.sh")],
        env={
            "PATH": PATH,
            "AGENTJOBS_RUBRIC_FILE": str(rubric),
            "EXAMPLE_GRADER_INPUT_DIR": str(artifacts),
        },
        capture_output=True,
        check=True,
    )
    reader = GradeReader()
    reader.feed(completed.stdout)
    return reader.close().grade


def test_r42_the_example_agent_meets_the_rubric_after_one_revision(tmp_path: Path) -> None:
    prompt = "Write this week's release notes.\n"
    first = run_grader(tmp_path, run_agent(tmp_path, prompt + prompts.TASK_RESULT_INSTRUCTION, 0))
    assert first.state is GradeState.NEEDS_REVISION
    section = revision.revision_section(
        iteration=0, max_iterations=3, explanation=first.explanation, criteria=first.criteria
    )
    revised_prompt = prompt + "\n" + section + prompts.TASK_RESULT_INSTRUCTION
    output = run_agent(tmp_path, revised_prompt, 1)
    second = run_grader(tmp_path, output)
    assert second.state is GradeState.SATISFIED
    notes = (output / "notes.md").read_text()
    assert "## Revised after the grader's feedback" in notes
    assert "success" not in notes  # the TASK_RESULT instruction's bullets are not feedback
