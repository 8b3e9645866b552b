"""A transcript as the console shows it (R72): entries from each CLI's events, pages, reports.

Cases: Claude Code's words, tool calls answered by their results (a failed
one marked), thinking, prompts and its own error at the end; Codex's items
started then completed as one tool call, failed commands, file changes,
reasoning, retry errors and a failed turn; Gemini CLI's deltas as one
message and its tools by id; OpenCode's tool parts and an end a later step
takes back; ``jsonl`` showing the tools of the CLI it recognised; lines that
are not events, and ``text`` logs, as text; a huge output cut; the words
shown are the reader's own; pages split at line ends, chain to the end
whatever their size and say so when a line is longer than a page; a live log
fed in chunks of any size reads as the whole, and a line past the reader's
limit is named, not kept, and the next line read.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from agentjobs.contract.conversation import builder, pages
from agentjobs.contract.conversation.builder import Conversation
from agentjobs.contract.conversation.entries import Entry, Kind
from agentjobs.contract.conversation.live import LiveConversation
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import TranscriptFormat
from tests import builders
from tests.unit import agent_cli_events as cli

REPORT = builders.block({"success": True})


def entries(transcript_format: TranscriptFormat, text: str) -> list[Entry]:
    conversation = Conversation(transcript_format)
    offset = 0
    for line in text.encode().splitlines(keepends=True):
        conversation.add_line(line, offset)
        offset += len(line)
    return conversation.entries


def kinds(found: list[Entry]) -> list[str]:
    return [entry.kind.value for entry in found]


def claude(*content: dict[str, object], role: str = "assistant", message_id: str = "m1") -> str:
    return cli.line(
        {"type": role, "message": {"id": message_id, "role": role, "content": list(content)}}
    )


def test_claude_code_tool_calls_are_answered_by_their_results() -> None:
    text = (
        cli.line({"type": "system", "subtype": "init", "model": "claude-x", "cwd": "/workspace"})
        + claude(
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        )
        + claude({"type": "tool_result", "tool_use_id": "t1", "content": "a.txt\n"}, role="user")
        + claude(
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"path": "x"}},
            message_id="m2",
        )
        + claude(
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": "no such file"}],
                "is_error": True,
            },
            role="user",
        )
        + claude(
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Done."},
            message_id="m3",
        )
        + cli.claude_result("Done.")
    )
    found = entries(TranscriptFormat.CLAUDE_CODE, text)
    assert kinds(found) == ["note", "words", "tool", "tool", "words", "thinking", "end"]
    assert "model claude-x" in found[0].text
    bash, read = found[2], found[3]
    assert (bash.title, bash.output, bash.failed) == ("Bash", "a.txt\n", False)
    assert json.loads(bash.input) == {"command": "ls"}
    assert (read.output, read.failed, read.running) == ("no such file", True, False)
    assert found[-1].failed is False


def test_a_claude_code_prompt_and_its_own_error_at_the_end() -> None:
    text = cli.line(
        {"type": "user", "message": {"role": "user", "content": "Fix the parser"}}
    ) + cli.line(
        {"type": "result", "subtype": "success", "is_error": True, "result": "Invalid API key"}
    )
    found = entries(TranscriptFormat.CLAUDE_CODE, text)
    assert kinds(found) == ["prompt", "end"]
    assert found[0].text == "Fix the parser"
    assert (found[1].failed, found[1].text) == (True, "Invalid API key")


def codex_item(event: str, **item: object) -> str:
    return cli.line({"type": event, "item": item})


def test_codex_items_started_then_completed_are_one_tool_call() -> None:
    text = (
        cli.line({"type": "turn.started"})
        + codex_item("item.completed", id="r", type="reasoning", text="**Planning**")
        + codex_item(
            "item.started", id="c1", type="command_execution", command="ls", status="in_progress"
        )
        + codex_item(
            "item.completed",
            id="c1",
            type="command_execution",
            command="ls",
            aggregated_output="x\n",
            exit_code=0,
        )
        + codex_item("item.started", id="c2", type="command_execution", command="false")
        + codex_item(
            "item.completed",
            id="c2",
            type="command_execution",
            command="false",
            aggregated_output="",
            exit_code=1,
        )
        + codex_item(
            "item.completed",
            id="f",
            type="file_change",
            changes=[{"path": "a.py", "kind": "update"}],
            status="completed",
        )
        + cli.line({"type": "error", "message": "Reconnecting... 1/5"})
        + cli.codex_message("All done")
        + cli.codex_failed("stream disconnected")
    )
    found = entries(TranscriptFormat.CODEX, text)
    assert kinds(found) == ["thinking", "tool", "tool", "tool", "error", "words", "end"]
    ls, false, change = found[1], found[2], found[3]
    assert (ls.input, ls.output, ls.failed) == ("ls", "x\n", False)
    assert false.failed is True
    assert change.input == "update a.py"
    assert found[4].text == "Reconnecting... 1/5"
    assert (found[-1].failed, found[-1].text) == (True, "stream disconnected")


def test_a_codex_command_still_running_shows_as_running() -> None:
    found = entries(
        TranscriptFormat.CODEX,
        codex_item("item.started", id="c1", type="command_execution", command="make test"),
    )
    assert found[0].running and found[0].input == "make test"


def test_gemini_cli_deltas_are_one_message_and_tools_pair_by_id() -> None:
    text = (
        cli.line({"type": "init", "model": "gemini-x"})
        + cli.line({"type": "message", "role": "user", "content": "Explain"})
        + cli.gemini_tool()
        + cli.line(
            {
                "type": "tool_result",
                "tool_id": "t1",
                "status": "error",
                "error": {"message": "denied"},
            }
        )
        + cli.gemini_delta("Hel")
        + cli.gemini_delta("lo")
        + cli.gemini_result()
    )
    found = entries(TranscriptFormat.GEMINI_CLI, text)
    assert kinds(found) == ["note", "prompt", "tool", "words", "end"]
    assert (found[2].title, found[2].output, found[2].failed) == ("read_file", "denied", True)
    assert found[3].text == "Hello"


def opencode_tool(status: str, output: str) -> str:
    state = {"status": status, "input": {"command": "echo hi"}, "output": output}
    part = {"type": "tool", "callID": "c1", "tool": "bash", "state": state}
    return cli.line({"type": "tool_use", "sessionID": "s", "part": part})


def test_opencode_tool_parts_carry_their_output_and_a_later_step_takes_back_an_end() -> None:
    text = (
        opencode_tool("completed", "hi\n")
        + cli.opencode_text("First")
        + cli.opencode_finish("stop")
        + cli.line({"type": "step_start", "sessionID": "s", "part": {"type": "step-start"}})
        + cli.opencode_text("More", message_id="msg_2")
        + cli.opencode_finish("stop")
    )
    found = entries(TranscriptFormat.OPENCODE, text)
    assert kinds(found) == ["tool", "words", "end", "words", "end"]
    assert (found[0].title, found[0].output) == ("bash", "hi\n")
    assert found[2].text == "a step ended" and found[4].text == "the run ended"


def test_jsonl_shows_the_tools_of_the_cli_it_recognised() -> None:
    text = cli.line({"type": "system", "subtype": "init"}) + claude(
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}
    )
    assert kinds(entries(TranscriptFormat.JSONL, text)) == ["note", "tool"]


def test_lines_that_are_not_events_and_text_logs_are_text() -> None:
    found = entries(TranscriptFormat.CLAUDE_CODE, "starting up\nstill\n" + cli.claude_text("hi"))
    assert kinds(found) == ["text", "words"]
    assert found[0].text == "starting up\nstill"
    log = entries(TranscriptFormat.TEXT, f"\x1b[31mred\x1b[0m\n{REPORT}\n")
    assert kinds(log) == ["text"]
    assert log[0].text.startswith("red\nTASK_RESULT:")


def test_a_huge_tool_output_is_cut_and_says_how_much_more_there_was() -> None:
    output = "x" * (builder.TEXT_KEPT + 10)
    text = claude({"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}) + claude(
        {"type": "tool_result", "tool_use_id": "t1", "content": output}, role="user"
    )
    shown = entries(TranscriptFormat.CLAUDE_CODE, text)[0].output
    assert shown is not None and shown.endswith("10 more characters in the transcript")


def test_the_words_shown_are_the_ones_the_verdict_was_read_from() -> None:
    text = (
        cli.claude_text("Working.", "m1")
        + cli.claude_text(f"Finished.\n{REPORT}", "m2")
        + cli.claude_result()
    )
    reader = TranscriptReader(TranscriptFormat.CLAUDE_CODE)
    reader.feed(text.encode())
    verdict = reader.close()
    words = [e.text for e in entries(TranscriptFormat.CLAUDE_CODE, text) if e.kind is Kind.WORDS]
    assert verdict.last_message == "Finished."
    assert words == ["Working.", f"Finished.\n{REPORT}"]


def test_a_page_ends_at_the_last_line_end_and_the_next_starts_there() -> None:
    data = (cli.claude_text("one", "m1") + cli.claude_text("two", "m2")).encode()
    window = data[: len(data) - 5]
    page = pages.read_page(TranscriptFormat.CLAUDE_CODE, window, start=100, at_end=False)
    assert [e.text for e in page.entries] == ["one"]
    assert page.next_start == 100 + data.index(b"\n") + 1
    assert page.entries[0].offset == 100


def test_a_line_longer_than_the_window_is_named_not_shown() -> None:
    page = pages.read_page(TranscriptFormat.CODEX, b"{" * 50, start=7, at_end=False)
    assert page.line_too_long and page.next_start is None
    assert page.entries[0].text == "a line of more than 50 bytes is not shown here"


@given(st.lists(st.text(alphabet="ab \n", max_size=30), max_size=12), st.integers(8, 200))
def test_pages_of_any_size_cover_every_line_once(messages: list[str], size: int) -> None:
    data = "".join(cli.claude_text(m, f"m{i}") for i, m in enumerate(messages)).encode()
    start, seen = 0, []
    while start < len(data):
        window = data[start : start + size]
        page = pages.read_page(
            TranscriptFormat.CLAUDE_CODE,
            window,
            start=start,
            at_end=start + len(window) >= len(data),
        )
        if page.line_too_long:
            start = data.index(b"\n", start) + 1  # what the console's reader does
            continue
        seen.extend(e.offset for e in page.entries)
        assert page.next_start is None or page.next_start > start
        start = page.next_start if page.next_start is not None else len(data)
    whole = pages.read_page(TranscriptFormat.CLAUDE_CODE, data, start=0, at_end=True)
    assert set(seen) <= {e.offset for e in whole.entries}
    assert len(seen) == len(set(seen))


@given(st.lists(st.text(alphabet="ab \n", max_size=20), max_size=8), st.integers(1, 40))
def test_a_live_log_in_chunks_of_any_size_reads_as_the_whole(
    messages: list[str], size: int
) -> None:
    data = "".join(cli.claude_text(m, f"m{i}") for i, m in enumerate(messages)).encode() + b"tail"
    live = LiveConversation(TranscriptFormat.CLAUDE_CODE)
    for start in range(0, len(data), size):
        live.feed(data[start : start + size])
    live.close()
    whole = pages.read_page(TranscriptFormat.CLAUDE_CODE, data, start=0, at_end=True)
    assert live.conversation.entries == whole.entries


def test_a_live_line_longer_than_the_limit_is_named_and_the_next_one_read() -> None:
    live = LiveConversation(TranscriptFormat.CODEX, line_limit=128)  # the message's line fits
    long = b"{" + b"x" * 300 + b"\n"
    live.feed(long[:100])
    live.feed(long[100:] + cli.codex_message("after").encode())
    live.close()
    note, words = live.conversation.entries
    assert (note.kind, note.offset, note.text) == (
        Kind.NOTE,
        0,
        "a line of more than 128 bytes is not shown here",
    )
    assert (words.kind, words.offset, words.text) == (Kind.WORDS, len(long), "after")
    assert [index for index, _ in live.changes()] == [0, 1]
