"""Every real transcript in ../shared/transcripts read as SOURCES.md describes it (R13b-R13e).

Skipped when that folder is absent (it belongs to its authors and is not
part of the project). Cases, for each file, with `jsonl` and with its own
format: the last message is the whole final text SOURCES.md names (the
`result`, the last `agent_message`, the concatenated deltas, the last text
part); the terminal event is seen exactly when the file has one; the error
transcripts end `failed` with the R13e classification in `task_outcome`;
a report written into the final message is read, one written into tool
output is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjobs import cli
from agentjobs.models.contract import ReportState, TranscriptFormat
from tests import builders
from tests.unit.reading import read

SHARED = Path(__file__).parents[2].parent / "shared" / "transcripts"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/transcripts is absent")

OWN_FORMAT = {
    "claude": TranscriptFormat.CLAUDE_CODE,
    "cursor": TranscriptFormat.CLAUDE_CODE,
    "codex": TranscriptFormat.CODEX,
    "gemini": TranscriptFormat.GEMINI_CLI,
    "opencode": TranscriptFormat.OPENCODE,
}
# SOURCES.md: the captures that stop before their terminal event.
WITHOUT_TERMINAL_EVENT = {"claude-3", "codex-4"}
# SOURCES.md: the failed runs, and what R13e makes of each one's message.
ERRORS = {
    "claude-4": ("blocked", "auth"),  # not logged in
    "codex-10": ("blocked", "auth"),  # missing API key
    "codex-11": ("blocked", "config"),  # the model is not supported (400)
    "codex-12": ("blocked", "auth"),  # 401 after the retries
    "gemini-6": ("blocked", "config"),  # the requested model was not found
    "gemini-7": ("failed", "agent_cli_error"),  # an invalid stream after the answer
}
REPORT = builders.block({"success": True, "comments": "checked"})


def transcripts() -> list[Path]:
    return sorted(SHARED.glob("*.jsonl")) if SHARED.is_dir() else []


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def final_text(name: str, stream: list[dict[str, Any]]) -> str | None:
    """The final text as SOURCES.md says each CLI gives it, taken from the file."""
    family = name.split("-")[0]
    if family in ("claude", "cursor"):
        results = [e for e in stream if e.get("type") == "result"]
        if results:
            text: str = results[-1]["result"]
            return text
        last_id = [e for e in stream if e.get("type") == "assistant"][-1]["message"]["id"]
        return "\n".join(
            block["text"]
            for e in stream
            if e.get("type") == "assistant" and e["message"]["id"] == last_id
            for block in e["message"]["content"]
            if block["type"] == "text"
        )
    if family == "codex":
        texts = [
            e["item"]["text"]
            for e in stream
            if e.get("type") == "item.completed" and e["item"]["type"] == "agent_message"
        ]
        texts += [
            e["msg"]["last_agent_message"]
            for e in stream
            if "msg" in e and e["msg"]["type"] == "task_complete"
        ]
        return texts[-1] if texts else None
    if family == "gemini":
        deltas = [e for e in stream if e.get("type") == "message" and e["role"] == "assistant"]
        return "".join(e["content"] for e in deltas) or None
    parts = [e["part"]["text"] for e in stream if e.get("type") == "text"]
    return parts[-1] if parts else None


@pytest.mark.parametrize("path", transcripts(), ids=lambda path: path.stem)
@pytest.mark.parametrize("as_jsonl", [True, False], ids=["jsonl", "own-format"])
def test_each_transcript_gives_its_last_message_and_terminal_event(
    path: Path, as_jsonl: bool
) -> None:
    transcript_format = TranscriptFormat.JSONL if as_jsonl else OWN_FORMAT[path.stem.split("-")[0]]
    verdict = read(path.read_bytes(), transcript_format)
    expected = final_text(path.stem, events(path))
    assert verdict.last_message == (expected.strip() if expected else None)
    assert verdict.terminal_event_seen is (path.stem not in WITHOUT_TERMINAL_EVENT)
    assert (verdict.agent_cli_error is not None) is (path.stem in ERRORS)
    assert verdict.report.state is ReportState.NOT_REPORTED


@pytest.mark.parametrize("name", sorted(ERRORS))
@pytest.mark.parametrize("as_jsonl", [True, False], ids=["jsonl", "own-format"])
def test_each_error_transcript_ends_failed_with_its_classification(
    capsys: pytest.CaptureFixture[str], name: str, as_jsonl: bool
) -> None:
    own = OWN_FORMAT[name.split("-")[0]].value
    args = ["report", "--format", "jsonl" if as_jsonl else own, str(SHARED / f"{name}.jsonl")]
    assert cli.main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    status, kind = ERRORS[name]
    assert (printed["phase"], printed["failure_classification"]) == ("failed", "platform")
    outcome = printed["task_outcome"]
    assert (outcome["status"], outcome["blockers"][0]["type"]) == (status, kind)
    assert outcome["blockers"][0]["message"] == printed["agent_cli_error"]


def with_final_report(name: str, stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same events with a report written into the agent's final message."""
    family = name.split("-")[0]
    for event in reversed(stream):
        kind = event.get("type")
        if family in ("claude", "cursor") and kind == "assistant":
            texts = [b for b in event["message"]["content"] if b["type"] == "text"]
            if texts:
                texts[-1]["text"] += "\n" + REPORT
                break
        item = event.get("item", {})
        if family == "codex" and kind == "item.completed" and item["type"] == "agent_message":
            item["text"] += "\n" + REPORT
            break
        if family == "codex" and "msg" in event and event["msg"]["type"] == "task_complete":
            event["msg"]["last_agent_message"] += "\n" + REPORT
            break
        if family == "opencode" and kind == "text":
            event["part"]["text"] += "\n" + REPORT
            break
    if family == "gemini":  # split across two deltas, after the last one
        at = stream.index([e for e in stream if e.get("role") == "assistant"][-1]) + 1
        delta = {"type": "message", "role": "assistant", "delta": True}
        stream[at:at] = [
            {**delta, "content": "\n" + REPORT[:20]},
            {**delta, "content": REPORT[20:]},
        ]
    for event in stream:  # Claude Code's result repeats the final text
        if event.get("type") == "result" and isinstance(event.get("result"), str):
            event["result"] += "\n" + REPORT
    return stream


def with_tool_report(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same events with a report written into every tool's output."""
    for event in stream:
        if event.get("type") == "user":
            for block in event["message"]["content"]:
                if block.get("type") == "tool_result":
                    block["content"] = REPORT
        item = event.get("item", {})
        if item.get("type") == "command_execution":
            item["aggregated_output"] = REPORT
        if event.get("type") == "tool_result":
            event["output"] = REPORT
        if "msg" in event and event["msg"]["type"] == "exec_command_end":
            event["msg"]["stdout"] = REPORT
        state = event.get("part", {}).get("state")
        if isinstance(state, dict):
            state["output"] = REPORT
    return stream


def jsonl(stream: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(event) + "\n" for event in stream)


ANSWERED = [p for p in transcripts() if final_text(p.stem, events(p)) and p.stem not in ERRORS]


@pytest.mark.parametrize("path", ANSWERED, ids=lambda path: path.stem)
def test_a_report_in_the_final_message_is_read_and_one_in_tool_output_is_not(path: Path) -> None:
    own = OWN_FORMAT[path.stem.split("-")[0]]
    reported = jsonl(with_final_report(path.stem, events(path)))
    in_tools = jsonl(with_tool_report(events(path)))
    for transcript_format in (TranscriptFormat.JSONL, own):
        verdict = read(reported, transcript_format)
        assert verdict.report.state is ReportState.SUCCESS
        assert verdict.report.warnings == []
        assert read(in_tools, transcript_format).report.state is ReportState.NOT_REPORTED
