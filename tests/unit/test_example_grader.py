"""The example grader (manifests/examples/agent/grade.sh), read by the operator's grade reader.

Cases: a rubric criterion whose backquoted words no artifact contains is unmet, with feedback
naming them, and the grade needs revision; once an artifact holds them the grade is
satisfied; a criterion with quotes and backslashes survives as JSON; criteria without
backquotes are skipped; no artifacts, or no checkable criterion, is failed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.models.contract import Criterion, Grade, GradeState

GRADER = Path(__file__).parents[2] / "manifests" / "examples" / "agent" / "grade.sh"
RUBRIC = """# Release notes rubric

## Coverage
- names the release: `Release 1.2`
- credits the fix: `parser "v2" \\ fast`
- reads well
"""


def run_grader(tmp_path: Path, rubric: str, files: dict[str, str]) -> Grade:
    rubric_file = tmp_path / "rubric.md"
    rubric_file.write_text(rubric)
    inputs = tmp_path / "input"
    inputs.mkdir(exist_ok=True)
    for name, text in files.items():
        (inputs / name).write_text(text)
    completed = subprocess.run(
        ["sh", str(GRADER)],
        env={
            "PATH": "/usr/bin:/bin",
            "AGENTJOBS_RUBRIC_FILE": str(rubric_file),
            "EXAMPLE_GRADER_INPUT_DIR": str(inputs),
        },
        capture_output=True,
        check=True,
    )
    reader = GradeReader()
    reader.feed(completed.stdout)
    grade = reader.close().grade
    assert grade.warnings == []
    return grade


def test_an_unmet_criterion_needs_revision_and_a_revised_artifact_satisfies(
    tmp_path: Path,
) -> None:
    first = run_grader(tmp_path, RUBRIC, {"notes.md": "# Notes\nRelease 1.2 is out.\n"})
    assert first.state is GradeState.NEEDS_REVISION
    assert first.explanation == "1 of 2 criteria are not met."
    assert first.criteria == [
        Criterion(name="names the release: `Release 1.2`", met=True),
        Criterion(
            name='credits the fix: `parser "v2" \\ fast`',
            met=False,
            feedback='no artifact contains `parser "v2" \\ fast`: add it',
        ),
    ]
    revised = run_grader(tmp_path, RUBRIC, {"fix.md": 'The parser "v2" \\ fast landed.\n'})
    assert revised.state is GradeState.SATISFIED
    assert [c.met for c in revised.criteria] == [True, True]


def test_no_artifacts_is_failed(tmp_path: Path) -> None:
    grade = run_grader(tmp_path, RUBRIC, {})
    assert grade.state is GradeState.FAILED
    assert grade.explanation == "The iteration left no artifacts to grade."


def test_a_rubric_without_a_checkable_criterion_is_failed(tmp_path: Path) -> None:
    grade = run_grader(tmp_path, "## Style\n- reads well\n", {"notes.md": "hello\n"})
    assert grade.state is GradeState.FAILED
    assert grade.explanation is not None and "backticks" in grade.explanation
