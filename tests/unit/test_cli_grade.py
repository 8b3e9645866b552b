"""`agentjobs grade`, used as a black box (R39).

Cases: every field of a readable grade; result null with a warning when the
log has no block or only an unreadable one; the strongest block stands;
stdin; an agent-CLI transcript, its usage and its missing terminal event;
exit code 2 with one line on stderr for a missing file, a directory or bad
flags.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentjobs import cli
from tests.unit import agent_cli_events as events

GRADE = {
    "result": "needs_revision",
    "explanation": "One link is dead.",
    "criteria": [
        {"name": "coverage", "met": True},
        {"name": "links", "met": False, "feedback": "fix the link to #12"},
        {"name": 3, "met": False},
    ],
    "usage": {"input_tokens": 2400, "output_tokens": 350},
}


def block(body: object) -> str:
    text = body if isinstance(body, str) else json.dumps(body)
    return f"GRADE_RESULT: {text}\nGRADE_RESULT_END\n"


def grade(capsys: pytest.CaptureFixture[str], tmp_path: Path, log: str, *flags: str) -> Any:
    path = tmp_path / "grader.log"
    path.write_text(log)
    assert cli.main(["grade", *flags, str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_a_readable_grade_prints_every_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = grade(capsys, tmp_path, "Checked three criteria.\n" + block(GRADE))
    assert set(printed) == {"result", "explanation", "criteria", "usage", "warnings"}
    assert printed["result"] == "needs_revision"
    assert printed["explanation"] == "One link is dead."
    assert printed["criteria"] == [
        {"name": "coverage", "met": True, "feedback": None},
        {"name": "links", "met": False, "feedback": "fix the link to #12"},
    ]
    assert printed["usage"]["inputTokens"] == 2400
    assert printed["usage"]["outputTokens"] == 350
    assert [w.split("`")[1] for w in printed["warnings"]] == ["criteria[2]"]


def test_no_block_prints_a_null_result_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = grade(capsys, tmp_path, "All good, I think.\n")
    assert printed["result"] is None
    assert printed["warnings"] == ["no GRADE_RESULT block in the log"]


def test_an_unreadable_block_prints_a_null_result_and_says_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = grade(capsys, tmp_path, block('{"result": "pass", "explanation": "ok"}'))
    assert printed["result"] is None
    assert printed["warnings"][0].startswith("unreadable grade: `result` is a string 'pass'")


def test_the_strongest_block_stands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = block({"result": "failed", "explanation": "no files"}) + block(
        {"result": "satisfied", "explanation": "fine"}
    )
    printed = grade(capsys, tmp_path, log)
    assert (printed["result"], printed["explanation"]) == ("failed", "no files")


def test_an_agent_cli_transcript_is_read_with_its_usage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = {"result": "satisfied", "explanation": "every criterion is met"}
    log = events.claude_text(block(body)) + events.claude_result(
        "done", usage={"input_tokens": 12, "output_tokens": 3}
    )
    printed = grade(capsys, tmp_path, log, "--format", "claude-code")
    assert printed["result"] == "satisfied"
    assert printed["usage"]["inputTokens"] == 12
    assert printed["warnings"] == []


def test_a_transcript_without_its_terminal_event_warns(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = events.codex_message(block({"result": "satisfied", "explanation": "ok"}))
    printed = grade(capsys, tmp_path, log, "--format", "codex")
    assert printed["result"] == "satisfied"
    assert any("no terminal result event" in w for w in printed["warnings"])


def test_the_log_may_come_on_stdin() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentjobs.cli", "grade", "-"],
        input=block(GRADE).encode(),
        capture_output=True,
        check=True,
    )
    assert json.loads(completed.stdout)["result"] == "needs_revision"


@pytest.mark.parametrize(
    "args",
    [
        ["grade", "/no/such/log"],
        ["grade", "/"],
        ["grade", "--bogus"],
        ["grade", "--format", "xml", "-"],
        ["grade", "a.log", "b.log"],
    ],
)
def test_errors_exit_2_with_one_line_on_stderr(args: list[str]) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentjobs.cli", *args], capture_output=True, text=True, input=""
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert "error" in completed.stderr
