"""Throughput of the streaming TASK_RESULT reader beside ``grep -F -c 'TASK_RESULT:'``.

Generates a realistic 256 MB agent log (prose, code, tool output, some ANSI
colour, a few reports, the marker quoted mid-line), then reads it with both,
best of three runs each, in this one process, and prints MB/s and the ratio.
Then, for each agent CLI's format, a 256 MB transcript in that CLI's event
shape (its words, tool calls and their output, usage where the CLI reports
it, a report in the final message, the terminal event), read by the reader
in that format beside ``jq -c . >/dev/null`` on the same file, so that no
format hides a slowdown.

    python benchmarks/parser.py [--size-mb 256] [--keep PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path

from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import TranscriptFormat

BLOCK_SIZE = 1024 * 1024
DISTINCT_BLOCKS = 48
READ_CHUNK = 1024 * 1024
RUNS = 3

WORDS = (
    "the a of to and in is for that with on this as be it by are file test function "
    "module class error value return import config cluster pod phase agent output "
    "update fix change review branch commit patch parser stream report handler "
    "retry timeout request response token secret namespace label status result"
).split()
TOOL_LINES = [
    "tests/unit/test_parser.py::test_split_chunks PASSED                      [ 42%]",
    "\x1b[32m✓\x1b[0m compiled operator/agentjobs/contract/reading/report_reader.py",
    "diff --git a/operator/agentjobs/cli.py b/operator/agentjobs/cli.py",
    "+    reader.feed(chunk)",
    "-    reader.feed(data)",
    "\x1b[1;31merror\x1b[0m: expected `;`, found `}` at src/main.rs:42:7",
    "INFO 2026-11-30T12:00:01Z controller reconciled namespace=default name=demo",
    '{"level":"debug","msg":"watch event","type":"MODIFIED","rv":"123456"}',
]


def _prose_line(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(6, 18))).capitalize() + "."


def _block(rng: random.Random) -> bytes:
    lines: list[str] = []
    size = 0
    while size < BLOCK_SIZE:
        kind = rng.random()
        if kind < 0.55:
            paragraph = [_prose_line(rng) for _ in range(rng.randint(1, 6))]
            new = [*paragraph, ""]
        elif kind < 0.85:
            new = rng.choices(TOOL_LINES, k=rng.randint(3, 30))
        elif kind < 0.99:
            new = ["```python", *(f"    value_{i} = compute({i})" for i in range(12)), "```"]
        else:
            new = ["The docs say every phase ends with a TASK_RESULT: block and its terminator."]
        lines.extend(new)
        size += sum(len(line) + 1 for line in new)
    return ("\n".join(lines) + "\n").encode()


REPORTS = [
    b'TASK_RESULT: {"success": false, "failure_reason": "task", "comments": "first try"}\n'
    b"TASK_RESULT_END\n",
    b'TASK_RESULT:\n{\n  "success": true,\n  "side_effects": "succeeded",\n'
    b'  "comments": "Opened the pull request with the fix"\n}\nTASK_RESULT_END\n',
]


def generate(path: Path, size_mb: int) -> None:
    rng = random.Random(20261130)
    blocks = [_block(rng) for _ in range(DISTINCT_BLOCKS)]
    report_at = {size_mb // 3: REPORTS[0], size_mb - 1: REPORTS[1]}
    with path.open("wb") as log:
        for index in range(size_mb):
            log.write(rng.choice(blocks))
            log.write(report_at.get(index, b""))


FINAL_REPORT = 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "done"}'
Event = dict[str, object]


def _words(rng: random.Random) -> str:
    return "\n".join(_prose_line(rng) for _ in range(rng.randint(1, 4)))


def _tool_output(rng: random.Random) -> str:
    return "\n".join(rng.choices(TOOL_LINES, k=rng.randint(3, 40)))


def _tokens(rng: random.Random) -> dict[str, int]:
    return {"input_tokens": rng.randrange(10, 5000), "output_tokens": rng.randrange(10, 2000)}


def _claude_turn(rng: random.Random, text: str) -> list[Event]:
    # Each block of a message repeats the message's model and usage, as Claude Code prints it.
    message: Event = {
        "id": f"msg_{rng.randrange(10**9)}",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "usage": {**_tokens(rng), "cache_read_input_tokens": rng.randrange(10**5)},
    }
    blocks: list[Event] = [
        {"type": "text", "text": text},
        {"type": "tool_use", "id": "t", "name": "Bash"},
    ]
    events: list[Event] = [
        {"type": "assistant", "message": {**message, "content": [b]}} for b in blocks
    ]
    result = {"type": "tool_result", "tool_use_id": "t", "content": _tool_output(rng)}
    return [*events, {"type": "user", "message": {"role": "user", "content": [result]}}]


def _codex_turn(rng: random.Random, text: str) -> list[Event]:
    command = {"type": "command_execution", "aggregated_output": _tool_output(rng), "exit_code": 0}
    return [
        {"type": "item.completed", "item": {"type": "reasoning", "text": _prose_line(rng)}},
        {"type": "item.completed", "item": command},
        {"type": "item.completed", "item": {"type": "agent_message", "text": text}},
    ]


def _gemini_turn(rng: random.Random, text: str) -> list[Event]:
    cut = len(text) // 2
    return [
        {"type": "message", "role": "assistant", "content": piece, "delta": True}
        for piece in (text[:cut], text[cut:])
    ] + [
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t", "parameters": {}},
        {"type": "tool_result", "tool_id": "t", "status": "success", "output": _tool_output(rng)},
    ]


def _opencode_turn(rng: random.Random, text: str) -> list[Event]:
    message = f"msg_{rng.randrange(10**9)}"
    state = {"status": "completed", "output": _tool_output(rng)}
    return [
        {"type": "text", "sessionID": "s", "part": {"messageID": message, "text": text}},
        {"type": "tool_use", "sessionID": "s", "part": {"tool": "bash", "state": state}},
        {
            "type": "step_finish",
            "sessionID": "s",
            "part": {
                "reason": "tool-calls",
                "cost": rng.random() / 100,
                "tokens": {"input": rng.randrange(10, 5000), "output": rng.randrange(10, 2000)},
            },
        },
    ]


# Each CLI: a turn of its events around the agent's words, and its terminal event.
CLI_SHAPES = {
    TranscriptFormat.CLAUDE_CODE: (
        _claude_turn,
        {"type": "result", "subtype": "success", "is_error": False},
    ),
    TranscriptFormat.CODEX: (_codex_turn, {"type": "turn.completed", "usage": {"input_tokens": 1}}),
    TranscriptFormat.GEMINI_CLI: (
        _gemini_turn,
        {"type": "result", "status": "success", "stats": {}},
    ),
    TranscriptFormat.OPENCODE: (
        _opencode_turn,
        {"type": "step_finish", "sessionID": "s", "part": {"reason": "stop"}},
    ),
}


def generate_transcript(path: Path, size_mb: int, transcript_format: TranscriptFormat) -> None:
    rng = random.Random(20261201)
    turn, terminal = CLI_SHAPES[transcript_format]
    blocks = []
    for _ in range(DISTINCT_BLOCKS):
        lines: list[str] = []
        while sum(map(len, lines)) < BLOCK_SIZE:
            lines.extend(json.dumps(event) + "\n" for event in turn(rng, _words(rng)))
        blocks.append("".join(lines).encode())
    final = turn(rng, _words(rng) + "\n" + FINAL_REPORT + "\nTASK_RESULT_END")
    with path.open("wb") as log:
        for _ in range(size_mb):
            log.write(rng.choice(blocks))
        log.write("".join(json.dumps(event) + "\n" for event in [*final, terminal]).encode())


def _best_seconds(run: object) -> float:
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def _read_with_reader(path: Path, transcript_format: TranscriptFormat, expected: str) -> None:
    reader = TranscriptReader(transcript_format)
    with path.open("rb", buffering=0) as log:
        while chunk := log.read(READ_CHUNK):
            reader.feed(chunk)
    verdict = reader.close()
    assert verdict.report.state.value == expected, verdict
    assert verdict.terminal_event_seen or transcript_format is TranscriptFormat.TEXT


def _read_with_jq(path: Path) -> None:
    with path.open("rb") as log:
        subprocess.run(["jq", "-c", "."], stdin=log, stdout=subprocess.DEVNULL, check=True)


def _read_with_grep(path: Path) -> None:
    # A pipe, not /dev/null: GNU grep stops at the first match when it writes to /dev/null.
    subprocess.run(
        ["grep", "-F", "-c", "TASK_RESULT:", str(path)], check=True, stdout=subprocess.PIPE
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--keep", type=Path, help="write the log here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.keep or Path(scratch) / "agent.log"
        generate(path, args.size_mb)
        megabytes = path.stat().st_size / 1e6
        path.read_bytes()  # warm the page cache for both readers alike
        grep_seconds = _best_seconds(lambda: _read_with_grep(path))
        reader_seconds = _best_seconds(
            lambda: _read_with_reader(path, TranscriptFormat.TEXT, "failure")
        )
        grep_rate, reader_rate = megabytes / grep_seconds, megabytes / reader_seconds
        print(f"log: {megabytes:.0f} MB, best of {RUNS} runs each")
        print(f"grep -F -c 'TASK_RESULT:': {grep_rate:8.0f} MB/s")
        print(f"agentjobs reader:          {reader_rate:8.0f} MB/s")
        print(f"ratio (reader / grep):     {reader_rate / grep_rate:8.2f}x")
        for transcript_format in CLI_SHAPES:
            _compare_with_jq(
                Path(scratch) / f"{transcript_format}.jsonl", args.size_mb, transcript_format
            )


def _compare_with_jq(path: Path, size_mb: int, transcript_format: TranscriptFormat) -> None:
    generate_transcript(path, size_mb, transcript_format)
    megabytes = path.stat().st_size / 1e6
    path.read_bytes()
    jq_rate = megabytes / _best_seconds(lambda: _read_with_jq(path))
    reader_rate = megabytes / _best_seconds(
        lambda: _read_with_reader(path, transcript_format, "success")
    )
    path.unlink()
    print(
        f"{transcript_format.value:<12} {megabytes:.0f} MB: reader {reader_rate:6.0f} MB/s, "
        f"jq -c . {jq_rate:6.0f} MB/s, ratio (reader / jq) {reader_rate / jq_rate:5.2f}x"
    )


if __name__ == "__main__":
    main()
