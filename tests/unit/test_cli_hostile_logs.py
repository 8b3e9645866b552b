"""`agentjobs report` and `agentjobs grade` on logs that used to crash them (issue 21).

Cases, for both commands run as a process: a lone surrogate in a report's comments
or a grade's explanation, a CLI error cut inside a surrogate, an event whose `type`
is a list in `jsonl`, usage counts beyond int64 and a cost of 1e999 each print one
JSON object and exit 0 with nothing on stderr, terminal controls gone; an error
nobody expected while reading prints one line naming it and exits 2, no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from agentjobs import cli
from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.contract.reading.transcript_reader import TranscriptReader

HOSTILE_LOGS = {
    "surrogate comments": (
        "text",
        'TASK_RESULT: {"success": true, "comments": "ok \\ud83d \\u001b]0;x\\u0007"}\n'
        "TASK_RESULT_END\n"
        'GRADE_RESULT: {"result": "failed", "explanation": "bad \\ud83d"}\nGRADE_RESULT_END\n',
    ),
    "surrogate cli error": (
        "claude-code",
        '{"type":"result","is_error":true,"result":"' + "a" * 1023 + '\\ud83dz"}\n',
    ),
    "list type": ("jsonl", '{"type":["result"]}\n{"type":{"a":1}}\n{"type":"result"}\n'),
    "huge usage": (
        "claude-code",
        '{"type":"result","result":"ok","total_cost_usd":1e999,'
        '"usage":{"input_tokens":' + "9" * 40 + "}}\n",
    ),
}


def run(command: str, transcript_format: str, log: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "agentjobs.cli", command, "--format", transcript_format, "-"],
        input=log.encode(),
        capture_output=True,
        check=False,
    )


@pytest.mark.parametrize("command", ["report", "grade"])
@pytest.mark.parametrize("case", HOSTILE_LOGS)
def test_a_hostile_log_prints_one_json_object(command: str, case: str) -> None:
    transcript_format, log = HOSTILE_LOGS[case]
    completed = run(command, transcript_format, log)
    assert completed.stderr == b""
    assert completed.returncode == 0
    printed: dict[str, Any] = json.loads(completed.stdout)
    assert "\x1b" not in json.dumps(printed, ensure_ascii=False)


def test_a_report_with_a_surrogate_prints_the_replacement_character() -> None:
    transcript_format, log = HOSTILE_LOGS["surrogate comments"]
    printed = json.loads(run("report", transcript_format, log).stdout)
    assert printed["comments"] == "ok \ufffd ]0;x"


def test_usage_beyond_int64_is_printed_clamped() -> None:
    transcript_format, log = HOSTILE_LOGS["huge usage"]
    printed = json.loads(run("report", transcript_format, log).stdout)
    assert printed["usage"]["inputTokens"] == 2**63 - 1


@pytest.mark.parametrize(
    ("command", "reader"), [("report", TranscriptReader), ("grade", GradeReader)]
)
def test_an_unexpected_error_prints_one_line_not_a_traceback(
    command: str,
    reader: type[TranscriptReader] | type[GradeReader],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
) -> None:
    def broken(self: object, chunk: bytes) -> None:
        raise RuntimeError("a bug in the reader")

    monkeypatch.setattr(reader, "feed", broken)
    path = tmp_path / "agent.log"
    path.write_text("hello\n")
    assert cli.main([command, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "agentjobs: error: the log could not be read: RuntimeError: a bug in the reader\n"
    )
