"""Reading the agent CLIs' own transcripts (R13b-R13f).

Cases: each of the project's fixtures, read with `jsonl` and with its own
format, gives its report, last message, terminal event, CLI error and usage;
Claude Code blocks are one message per `message.id`, thinking and subagent
text are not the agent's; Gemini CLI deltas are one message and a report may
be split across them; Codex reasoning and command output, OpenCode tool
output and tool results are never a report; a non-terminal error ends
nothing; OpenCode's last `step_finish` decides; the first CLI error stands;
usage sums over turns and steps; `jsonl` recognises the CLI from its first
identifying event, reads generic events before it, and stays generic
otherwise; a named format reads no other CLI's events.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentjobs.models.contract import FailureKind, ReportState, TranscriptFormat, Usage
from tests import builders
from tests.unit.agent_cli_events import (
    FIXTURES,
    claude_result,
    claude_text,
    codex_command,
    codex_completed,
    codex_failed,
    codex_message,
    gemini_delta,
    gemini_result,
    gemini_tool,
    line,
    opencode_finish,
    opencode_text,
)
from tests.unit.reading import read

JSONL = TranscriptFormat.JSONL
CLAUDE = TranscriptFormat.CLAUDE_CODE
CODEX = TranscriptFormat.CODEX
GEMINI = TranscriptFormat.GEMINI_CLI
OPENCODE = TranscriptFormat.OPENCODE
REPORT = builders.block({"success": True, "comments": "ok"})
FAILURE = 'TASK_RESULT: {"success": false, "failure_reason": "task"}\nTASK_RESULT_END'


@dataclass(frozen=True)
class Expected:
    state: ReportState
    last_message_start: str | None
    error: FailureKind | None
    usage: Usage | None


FIXTURE_VERDICTS = {
    ("claude-code.jsonl", CLAUDE): Expected(
        ReportState.SUCCESS,
        "Done with the change.\nThe retry loop in fetch.py",
        None,
        Usage(
            input_tokens=16,
            output_tokens=107,
            cache_creation_input_tokens=1200,
            cache_read_input_tokens=8800,
            cost_usd=0.0425,
            turns=2,
        ),
    ),
    ("claude-code-auth-failure.jsonl", CLAUDE): Expected(
        ReportState.NOT_REPORTED,
        "API key rejected",
        FailureKind.AUTH,
        Usage(
            input_tokens=0,
            output_tokens=0,
            cache_creation_input_tokens=0,
            cache_read_input_tokens=0,
            cost_usd=0.0,
            turns=1,
        ),
    ),
    ("claude-code-max-turns.jsonl", CLAUDE): Expected(
        ReportState.NOT_REPORTED,
        "Still going through the failing tests",
        FailureKind.MAX_TURNS,
        Usage(
            input_tokens=40,
            output_tokens=2100,
            cache_creation_input_tokens=0,
            cache_read_input_tokens=52000,
            cost_usd=0.31,
            turns=1,
        ),
    ),
    ("codex.jsonl", CODEX): Expected(
        ReportState.SUCCESS,
        "Renamed the config loader",
        None,
        Usage(input_tokens=3000, output_tokens=450, cache_read_input_tokens=6000, turns=1),
    ),
    ("codex-usage-limit.jsonl", CODEX): Expected(
        ReportState.NOT_REPORTED, None, FailureKind.RATE_LIMIT, Usage(turns=1)
    ),
    ("codex-legacy.jsonl", CODEX): Expected(
        ReportState.SUCCESS,
        "The changelog lists three fixes",
        None,
        Usage(input_tokens=2000, output_tokens=120, cache_read_input_tokens=500),
    ),
    ("gemini-cli.jsonl", GEMINI): Expected(
        ReportState.SUCCESS,
        "I added a module docstring to util.py that explains what each helper is for.",
        None,
        Usage(input_tokens=11000, output_tokens=300, cache_read_input_tokens=4000, turns=1),
    ),
    ("gemini-cli-quota.jsonl", GEMINI): Expected(
        ReportState.NOT_REPORTED,
        None,
        FailureKind.RATE_LIMIT,
        Usage(input_tokens=0, output_tokens=0, cache_read_input_tokens=0),
    ),
    ("opencode.jsonl", OPENCODE): Expected(
        ReportState.SUCCESS,
        "The todo list now has the three items",
        None,
        Usage(
            input_tokens=1800,
            output_tokens=100,
            cache_creation_input_tokens=1200,
            cache_read_input_tokens=1200,
            cost_usd=0.003,
            turns=2,
        ),
    ),
    ("opencode-error.jsonl", OPENCODE): Expected(
        ReportState.NOT_REPORTED, None, FailureKind.CONFIG, Usage(turns=1)
    ),
}


@pytest.mark.parametrize(("name", "own_format"), list(FIXTURE_VERDICTS))
@pytest.mark.parametrize("as_jsonl", [True, False])
def test_r13b_each_fixture_reads_the_same_with_jsonl_and_with_its_own_format(
    name: str, own_format: TranscriptFormat, as_jsonl: bool
) -> None:
    expected = FIXTURE_VERDICTS[name, own_format]
    verdict = read((FIXTURES / name).read_bytes(), JSONL if as_jsonl else own_format)
    assert verdict.report.state is expected.state
    assert verdict.report.warnings == []  # a report repeated by the terminal event counts once
    assert verdict.terminal_event_seen
    if expected.last_message_start is None:
        assert verdict.last_message is None
    else:
        assert verdict.last_message is not None
        assert verdict.last_message.startswith(expected.last_message_start)
    error = verdict.agent_cli_error
    assert (error.kind if error else None) is expected.error
    assert verdict.usage == expected.usage


def test_r13c_claude_code_blocks_of_one_message_id_are_one_message() -> None:
    log = (
        claude_text("First I read the code.", "msg_a")
        + claude_text('TASK_RESULT: {"success": true}', "msg_b")
        + claude_text("TASK_RESULT_END", "msg_b")
        + claude_text("Then I explain what changed in the parser.", "msg_b")
        + claude_text("And what is left to do.", "msg_b")
        + claude_result()
    )
    verdict = read(log, CLAUDE)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.last_message == (
        "Then I explain what changed in the parser.\nAnd what is left to do."
    )


def test_r13c_claude_code_thinking_and_subagent_text_are_not_the_agents() -> None:
    thinking = {"type": "thinking", "thinking": FAILURE, "signature": "x"}
    log = (
        line({"type": "assistant", "message": {"id": "m1", "content": [thinking]}})
        + claude_text(FAILURE, "m2", parent_tool_use_id="toolu_1")
        + claude_text("The summary of my own work, in my own words.", "m3")
        + claude_result()
    )
    verdict = read(log, CLAUDE)
    assert verdict.report.state is ReportState.NOT_REPORTED
    assert verdict.last_message == "The summary of my own work, in my own words."


def test_r13c_a_report_in_a_claude_code_tool_result_is_not_a_report() -> None:
    tool_result = {
        "type": "tool_result",
        "tool_use_id": "t",
        "content": [{"type": "text", "text": FAILURE}],
    }
    user = {"type": "user", "message": {"role": "user", "content": [tool_result]}}
    log = line(user) + claude_text("Nothing to report yet.", "m1") + claude_result()
    assert read(log, CLAUDE).report.state is ReportState.NOT_REPORTED


@pytest.mark.parametrize("cut", [1, 12, 13, 30, len(REPORT) - 16, len(REPORT) - 1])
def test_r13c_a_report_split_across_two_gemini_deltas_is_read(cut: int) -> None:
    text = "Here is what I did.\n" + REPORT
    split = len("Here is what I did.\n") + cut
    log = gemini_delta(text[:split]) + gemini_delta(text[split:]) + gemini_result()
    verdict = read(log, GEMINI)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.report.comments == "ok"
    assert verdict.last_message == "Here is what I did."


def test_r13c_gemini_deltas_are_concatenated_into_one_last_message() -> None:
    log = gemini_delta("The answer is 4") + gemini_delta("2, and here is") + gemini_delta(" why.")
    assert read(log + gemini_result(), GEMINI).last_message == "The answer is 42, and here is why."


def test_r13c_a_tool_call_between_gemini_deltas_ends_the_message() -> None:
    log = (
        gemini_delta("Reading the file first.") + gemini_tool() + gemini_delta("It holds 3 lines.")
    )
    assert read(log + gemini_result(), GEMINI).last_message == "It holds 3 lines."


def test_r13c_gemini_tool_output_is_not_a_report() -> None:
    tool_result = {"type": "tool_result", "tool_id": "t1", "status": "success", "output": FAILURE}
    log = gemini_tool() + line(tool_result) + gemini_delta("Read it.") + gemini_result()
    assert read(log, GEMINI).report.state is ReportState.NOT_REPORTED


def test_r13c_codex_reasoning_and_command_output_are_not_reports() -> None:
    reasoning = {"type": "item.completed", "item": {"type": "reasoning", "text": FAILURE}}
    log = line(reasoning) + codex_command(FAILURE + "\n") + codex_message("Listed the files.")
    verdict = read(log + codex_completed(), CODEX)
    assert verdict.report.state is ReportState.NOT_REPORTED
    assert verdict.last_message == "Listed the files."


def test_r13c_the_last_codex_agent_message_is_the_last_message() -> None:
    log = codex_message("Progress: two of three done.") + codex_message(
        "All three files fixed.\n" + REPORT
    )
    verdict = read(log + codex_completed(), CODEX)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.last_message == "All three files fixed."


def test_r13c_codex_old_shape_task_complete_text_is_read_when_no_message_came_before() -> None:
    log = line({"id": "1", "msg": {"type": "task_complete", "last_agent_message": REPORT}})
    verdict = read(log, CODEX)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.terminal_event_seen


def test_r13f_codex_running_totals_under_info_add_only_their_growth() -> None:
    def token_count(total: int, cached: int, output: int) -> str:
        counts = {"input_tokens": total, "cached_input_tokens": cached, "output_tokens": output}
        info = {"total_token_usage": counts, "last_token_usage": counts}
        return line({"id": "1", "msg": {"type": "token_count", "info": info}})

    log = (
        token_count(100, 40, 10)
        + token_count(100, 40, 10)  # repeated with a rate-limit update: nothing new
        + line({"id": "1", "msg": {"type": "token_count", "info": None}})
        + token_count(250, 90, 30)
        + line({"id": "1", "msg": {"type": "task_complete", "last_agent_message": REPORT}})
    )
    usage = read(log, CODEX).usage
    assert usage == Usage(input_tokens=160, output_tokens=30, cache_read_input_tokens=90)


def test_r13c_opencode_tool_output_is_not_a_report_and_text_parts_are() -> None:
    tool = {"type": "tool", "tool": "bash", "state": {"status": "completed", "output": FAILURE}}
    log = line({"type": "tool_use", "sessionID": "s", "part": tool}) + opencode_text(REPORT)
    assert read(log + opencode_finish("stop"), OPENCODE).report.state is ReportState.SUCCESS


def test_r13c_opencode_text_parts_of_one_message_are_one_message() -> None:
    log = opencode_text("Line one of the answer.", "m1") + opencode_text("Line two.", "m1")
    verdict = read(log + opencode_finish("stop"), OPENCODE)
    assert verdict.last_message == "Line one of the answer.\nLine two."


def test_r13d_a_codex_reconnecting_error_ends_nothing() -> None:
    log = line({"type": "turn.started"}) + line({"type": "error", "message": "Reconnecting... 1/5"})
    verdict = read(log, CODEX)
    assert not verdict.terminal_event_seen
    assert verdict.agent_cli_error is None


def test_r13d_without_a_terminal_event_each_format_says_so() -> None:
    assert not read(claude_text("working", "m"), CLAUDE).terminal_event_seen
    assert not read(codex_message("working"), CODEX).terminal_event_seen
    assert not read(gemini_delta("working"), GEMINI).terminal_event_seen
    assert not read(opencode_text("working"), OPENCODE).terminal_event_seen


def test_r13d_only_the_last_opencode_step_finish_counts() -> None:
    stopped = opencode_text("Done here.") + opencode_finish("stop")
    assert read(stopped, OPENCODE).terminal_event_seen
    assert not read(stopped + opencode_finish("tool-calls"), OPENCODE).terminal_event_seen


def test_r13e_claude_code_is_error_fails_whatever_its_subtype() -> None:
    log = claude_result("Credit balance too low", is_error=True)
    error = read(log, CLAUDE).agent_cli_error
    assert error is not None
    assert (error.kind, error.code, error.message) == (
        FailureKind.AGENT_CLI_ERROR,
        "agent_cli_error",
        "Credit balance too low",
    )


def test_r13e_amp_puts_the_message_in_error() -> None:
    event = {"type": "result", "subtype": "error_during_execution", "is_error": True}
    error = read(line({**event, "error": "upstream returned 429"}), CLAUDE).agent_cli_error
    assert error is not None
    assert (error.kind, error.message) == (FailureKind.RATE_LIMIT, "upstream returned 429")


def test_r13e_a_gemini_error_result_takes_the_last_error_events_message() -> None:
    warning = line({"type": "error", "severity": "error", "message": "The stream broke off."})
    error = read(
        gemini_delta("Partial.") + warning + gemini_result("error"), GEMINI
    ).agent_cli_error
    assert error is not None
    assert error.message == "The stream broke off."


def test_r13e_a_codex_turn_failed_is_the_clis_error() -> None:
    error = read(codex_failed("unexpected status 401 Unauthorized"), CODEX).agent_cli_error
    assert error is not None
    assert error.kind is FailureKind.AUTH


def test_r13e_the_first_cli_error_stands() -> None:
    log = claude_result("Not signed in; run /login", is_error=True) + claude_result("fine")
    error = read(log, CLAUDE).agent_cli_error
    assert error is not None
    assert error.kind is FailureKind.AUTH


def test_r13e_a_successful_run_has_no_cli_error() -> None:
    assert read(codex_message("ok") + codex_completed(), CODEX).agent_cli_error is None


def test_r13f_usage_sums_over_codex_turns_and_opencode_steps() -> None:
    turns = codex_completed(input_tokens=100, cached_input_tokens=40, output_tokens=7) * 2
    assert read(turns, CODEX).usage == Usage(
        input_tokens=120, output_tokens=14, cache_read_input_tokens=80
    )
    steps = opencode_finish("tool-calls", input=5, output=1) + opencode_finish("stop", input=3)
    assert read(steps, OPENCODE).usage == Usage(input_tokens=8, output_tokens=1, cost_usd=1.0)


def test_r13f_no_usage_reported_is_none_not_zero() -> None:
    assert read(codex_message("ok") + line({"type": "turn.completed"}), CODEX).usage is None


def test_r13f_counts_that_are_not_non_negative_integers_are_not_reported() -> None:
    log = codex_completed(input_tokens=-3, output_tokens=True)  # type: ignore[arg-type]
    assert read(log, CODEX).usage is None


def test_r13b_jsonl_recognises_the_cli_from_its_first_identifying_event() -> None:
    # A generic message before the Gemini init is read generically; then deltas are joined.
    generic = line({"type": "message", "role": "assistant", "content": "Generic words."})
    init = line({"type": "init", "session_id": "s", "model": "m"})
    log = (
        generic + init + gemini_delta("Joined ") + gemini_delta("pieces.") + gemini_result("error")
    )
    verdict = read(log, JSONL)
    assert verdict.last_message == "Joined pieces."
    assert verdict.agent_cli_error is not None


def test_r13b_jsonl_without_an_identifying_event_reads_the_generic_shape() -> None:
    log = line({"type": "message", "role": "assistant", "content": REPORT}) + line(
        {"type": "result"}
    )
    verdict = read(log, JSONL)
    assert verdict.report.state is ReportState.SUCCESS
    assert verdict.terminal_event_seen


def test_r13b_a_named_format_reads_no_other_clis_events() -> None:
    log = claude_text(REPORT, "m1") + claude_result()
    verdict = read(log, CODEX)
    assert verdict.report.state is ReportState.NOT_REPORTED
    assert not verdict.terminal_event_seen


def test_r13_lines_that_are_not_json_are_text_in_every_cli_format() -> None:
    for transcript_format in (CLAUDE, CODEX, GEMINI, OPENCODE):
        assert read("warning: x\n" + REPORT + "\n", transcript_format).report.state is (
            ReportState.SUCCESS
        )
