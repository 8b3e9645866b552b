"""`agentjobs report` on agent-CLI transcripts (R13b-R13f, R14, R36).

Cases: `--format` takes every transcript format; the JSON's
`stream_intact`, `agent_cli_error` and `usage`; a CLI error fails the
phase with its classification in `task_outcome`, as the operator would;
a transcript without its terminal event is a broken stream, with a warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjobs import cli
from tests.unit.agent_cli_events import FIXTURES


def report(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert cli.main(["report", *args]) == 0
    printed: dict[str, Any] = json.loads(capsys.readouterr().out)
    return printed


@pytest.mark.parametrize(
    ("transcript_format", "name"),
    [
        ("jsonl", "codex.jsonl"),
        ("claude-code", "claude-code.jsonl"),
        ("codex", "codex-legacy.jsonl"),
        ("gemini-cli", "gemini-cli.jsonl"),
        ("opencode", "opencode.jsonl"),
    ],
)
def test_r13b_every_format_is_accepted_and_a_clean_run_completes(
    capsys: pytest.CaptureFixture[str], transcript_format: str, name: str
) -> None:
    printed = report(capsys, "--format", transcript_format, str(FIXTURES / name))
    assert (printed["phase"], printed["state"]) == ("completed", "success")
    assert printed["stream_intact"] is True
    assert printed["agent_cli_error"] is None
    assert printed["task_outcome"]["source"] == "agent"


def test_r13f_usage_is_printed_with_the_status_names(capsys: pytest.CaptureFixture[str]) -> None:
    printed = report(capsys, "--format", "claude-code", str(FIXTURES / "claude-code.jsonl"))
    assert printed["usage"] == {
        "inputTokens": 16,
        "outputTokens": 107,
        "cacheCreationInputTokens": 1200,
        "cacheReadInputTokens": 8800,
        "costUsd": 0.0425,
        "turns": 2,
    }


def test_r13e_a_cli_error_fails_the_phase_with_its_classification(
    capsys: pytest.CaptureFixture[str],
) -> None:
    printed = report(capsys, "--format", "jsonl", str(FIXTURES / "gemini-cli-quota.jsonl"))
    assert (printed["phase"], printed["failure_classification"]) == ("failed", "platform")
    assert printed["agent_cli_error"] == "[API Error: 429 Quota exceeded for requests per minute.]"
    outcome = printed["task_outcome"]
    assert (outcome["status"], outcome["source"], outcome["terminal_reason"]) == (
        "blocked",
        "system",
        "agent_cli_error",
    )
    assert outcome["blockers"][0]["type"] == "rate_limit"


def test_r13e_max_turns_is_failed_with_its_terminal_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    printed = report(
        capsys, "--format", "claude-code", str(FIXTURES / "claude-code-max-turns.jsonl")
    )
    outcome = printed["task_outcome"]
    assert (printed["phase"], outcome["status"], outcome["terminal_reason"]) == (
        "failed",
        "failed",
        "max_turns",
    )


def test_r14_a_transcript_without_its_terminal_event_is_a_broken_stream(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join((FIXTURES / "codex.jsonl").read_bytes().splitlines(True)[:-1]))
    printed = report(capsys, "--format", "codex", str(cut))
    assert printed["stream_intact"] is False
    assert (
        "no terminal result event in the codex transcript: stream broken (R14)"
        in printed["warnings"]
    )
