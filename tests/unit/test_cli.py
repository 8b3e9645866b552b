"""`agentjobs report`, used as a black box.

Cases: the JSON fields for each run flag; stdin; jsonl transcripts; the
artifact rule over a real directory; exit code 2 with one line on stderr for
a missing file, a missing directory or bad flags.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentjobs import cli

EXAMPLE = Path(__file__).parents[2] / "manifests/examples/transcripts/fix-parser.log"
SUBSTANTIVE = "I rewrote the retry loop in client.py and added regression tests for timeouts.\n"
FIELDS = {
    "state",
    "success",
    "failure_reason",
    "side_effects",
    "comments",
    "warnings",
    "phase",
    "failure_classification",
    "reported_failure_reason",
    "last_message",
    "stream_intact",
    "agent_cli_error",
    "usage",
    "task_outcome",
}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert cli.main(list(args)) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    printed: dict[str, Any] = json.loads(out)
    return printed


def log_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "agent.log"
    path.write_text(text)
    return str(path)


FAILURE_LOG = (
    'Could not finish.\nTASK_RESULT: {"success": false, "failure_reason": "refused", '
    '"side_effects": "none", "comments": "would delete prod data"}\nTASK_RESULT_END\n'
)


def test_the_example_log_completes_with_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    printed = run(capsys, "report", str(EXAMPLE))
    assert set(printed) == FIELDS
    assert printed["state"] == "success"
    assert printed["success"] is True
    assert printed["phase"] == "completed"
    assert printed["failure_classification"] is None
    assert printed["side_effects"] == "none"
    assert printed["task_outcome"]["source"] == "agent"


def test_r17_a_clean_failure_is_a_correct_refusal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = run(capsys, "report", log_file(tmp_path, FAILURE_LOG))
    assert (printed["phase"], printed["failure_classification"]) == ("failed", "correct_refusal")
    assert printed["reported_failure_reason"] == "refused"
    assert printed["comments"] == "would delete prod data"
    assert printed["last_message"] == "Could not finish."


def test_r21_a_non_zero_exit_fails_as_platform(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = run(capsys, "report", "--exit-code", "3", log_file(tmp_path, FAILURE_LOG))
    assert (printed["phase"], printed["failure_classification"]) == ("failed", "platform")
    assert printed["reported_failure_reason"] == "refused"


def test_r20_a_broken_stream_with_a_failure_is_platform(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    printed = run(capsys, "report", "--stream-broken", log_file(tmp_path, FAILURE_LOG))
    assert printed["failure_classification"] == "platform"


def test_r22_cancelled(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    printed = run(capsys, "report", "--cancelled", log_file(tmp_path, FAILURE_LOG))
    assert (printed["phase"], printed["failure_classification"]) == ("cancelled", None)


def test_the_log_may_come_on_stdin() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentjobs.cli", "report", "-"],
        input=EXAMPLE.read_bytes(),
        capture_output=True,
        check=True,
    )
    assert json.loads(completed.stdout)["state"] == "success"


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "agentjobs"
    completed = subprocess.run(
        [str(script), "report", str(EXAMPLE)], capture_output=True, check=True, text=True
    )
    assert json.loads(completed.stdout)["phase"] == "completed"


def test_r14_a_jsonl_transcript_without_its_terminal_event_is_broken(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    event = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "text",
                    "text": 'TASK_RESULT: {"success": false, "failure_reason": "task"}\n'
                    "TASK_RESULT_END",
                }
            ]
        },
    }
    path = log_file(tmp_path, json.dumps(event) + "\n")
    printed = run(capsys, "report", "--format", "jsonl", path)
    assert printed["state"] == "failure"
    assert printed["failure_classification"] == "platform"  # R20: broken stream
    assert any("terminal result event" in warning for warning in printed["warnings"])
    with open(path, "a") as log:
        log.write(json.dumps({"type": "result", "result": "x"}) + "\n")
    assert run(capsys, "report", "--format", "jsonl", path)["failure_classification"] == (
        "correct_refusal"
    )


def test_r28_r30_artifacts_from_a_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "output"
    output.mkdir()
    (output / "report.md").write_text("# Report\n")
    (output / "__pycache__").mkdir()
    (output / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (output / "secret").symlink_to("/etc/passwd")
    printed = run(capsys, "report", "--artifacts", str(output), log_file(tmp_path, SUBSTANTIVE))
    assert printed["artifacts"] == [
        {"path": "report.md", "title": "report.md", "size": 9, "recovered": False, "kept_as": None}
    ]
    assert printed["deliverable_recovered"] is False
    assert printed["error"] is None
    assert any("secret: a symlink; not followed" in warning for warning in printed["warnings"])


def test_r30_an_empty_directory_recovers_the_last_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "output"
    output.mkdir()
    printed = run(capsys, "report", "--artifacts", str(output), log_file(tmp_path, SUBSTANTIVE))
    assert printed["phase"] == "completed"
    assert printed["deliverable_recovered"] is True
    assert printed["artifacts"][0]["path"] == "recovered-from-transcript.md"
    assert printed["artifacts"][0]["title"].endswith("[recovered from transcript]")


def test_r33_an_empty_directory_and_a_bare_done_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "output"
    output.mkdir()
    printed = run(
        capsys,
        "report",
        "--artifacts",
        str(output),
        "--phase-name",
        "review",
        log_file(tmp_path, "Done.\n"),
    )
    assert (printed["phase"], printed["failure_classification"]) == ("failed", "platform")
    assert "'review'" in printed["error"]
    assert printed["artifacts"] == []


@pytest.mark.parametrize(
    "args",
    [
        ["report", "/no/such/log"],
        ["report", "--bogus"],
        ["report", "--format", "xml", "-"],
        ["report", "--exit-code", "x", "-"],
        ["report", "--artifacts", "/no/such/dir", str(EXAMPLE)],
        [],
    ],
)
def test_errors_exit_2_with_one_line_on_stderr(args: list[str]) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "agentjobs.cli", *args],
        capture_output=True,
        text=True,
        input="",
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert "error" in completed.stderr
