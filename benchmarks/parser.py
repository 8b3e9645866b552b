"""Throughput of the streaming TASK_RESULT reader beside ``grep -F -c 'TASK_RESULT:'``.

Generates a realistic 256 MB agent log (prose, code, tool output, some ANSI
colour, a few reports, the marker quoted mid-line), then reads it with both,
best of three runs each, in this one process, and prints MB/s and the ratio.

    python benchmarks/parser.py [--size-mb 256] [--keep PATH]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
import time
from pathlib import Path

from agentjobs.logic.transcript_reader import TranscriptReader

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
    "\x1b[32m✓\x1b[0m compiled operator/agentjobs/logic/report_reader.py",
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


def _best_seconds(run: object) -> float:
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def _read_with_reader(path: Path) -> None:
    reader = TranscriptReader()
    with path.open("rb", buffering=0) as log:
        while chunk := log.read(READ_CHUNK):
            reader.feed(chunk)
    verdict = reader.close()
    assert verdict.report.state.value == "failure", verdict


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
        reader_seconds = _best_seconds(lambda: _read_with_reader(path))
    grep_rate, reader_rate = megabytes / grep_seconds, megabytes / reader_seconds
    print(f"log: {megabytes:.0f} MB, best of {RUNS} runs each")
    print(f"grep -F -c 'TASK_RESULT:': {grep_rate:8.0f} MB/s")
    print(f"agentjobs reader:          {reader_rate:8.0f} MB/s")
    print(f"ratio (reader / grep):     {reader_rate / grep_rate:8.2f}x")


if __name__ == "__main__":
    main()
