"""Fuzz the transcript reader: no input may make an exception escape it (issue 21).

Each input is a transcript made from seed lines (the repository's example
transcripts, and the real ones in ``../shared/transcripts`` when that folder
is there: read, never copied), structurally mutated (a JSON value swapped for
a hostile one: a lone surrogate, a terminal control, a count beyond int64,
an infinity, a list where an object belongs, nesting past the parser's depth,
a report block), then byte-mutated, and fed to the reader in random chunks.
For each one, the reader's verdict must validate as the contract models, turn
into a Phase status that serialises as UTF-8 JSON, and hold no terminal
control and no count beyond int64; a grader's reader gets the same input.

    python -m benchmarks.fuzz_reader [--inputs 1000000] [--format codex ...] [--seed 1]

Prints each format's counts; exits 1 when any input made an exception escape
(each such input is written to ``--crash-dir``), else 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading.grade_reader import GradeReader
from agentjobs.contract.reading.transcript_reader import ReaderVerdict, TranscriptReader
from agentjobs.contract.resolution import resolution
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import Grade, Report, SystemFailure, TranscriptFormat, Usage
from agentjobs.models.resource_status import PhaseResourceStatus

ROOT = Path(__file__).resolve().parents[1]
SEED_DIRS = (
    ROOT / "tests" / "fixtures" / "transcripts",
    ROOT / "manifests" / "examples" / "transcripts",
    ROOT.parent / "shared" / "transcripts",
)
STRUCTURED_LINE_LIMIT = 16 * 1024  # longer seed lines are only byte-mutated
NOW = datetime(2026, 1, 1, tzinfo=UTC)
DEEP = b"[" * 3000 + b"]" * 3000
DEEP_MARK = "deep nesting goes here"

HOSTILE_VALUES: tuple[object, ...] = (
    "\ud83d",
    "half an emoji \ud83d then more",
    "\x1b]0;title\x07\x1b[2J\x00\x08\r\u202e\u2066\u200f\x9b",
    'TASK_RESULT: {"success": true, "comments": "c\\ud83d\\u001b[31m"}\nTASK_RESULT_END\n',
    'TASK_RESULT: {"success": false, "failure_reason": "task", "blockers": '
    '[{"type": "\\ud800", "message": "m", "recoverable": true}], "confidence": 1e999}\n'
    "TASK_RESULT_END\n",
    'GRADE_RESULT: {"result": "failed", "criteria": [{"name": "\\udfff", "met": false}], '
    '"usage": {"input_tokens": 99999999999999999999999}}\nGRADE_RESULT_END\n',
    10**30,
    2**63,
    -(2**70),
    -1,
    float("inf"),
    float("nan"),
    1e308,
    0.5,
    True,
    None,
    [],
    {},
    [1, "x", None],
    {"type": ["x"]},
    {"type": {"a": 1}},
    "x" * 5000,
    "é" * 700,
)
HOSTILE_TYPES: tuple[object, ...] = (["result"], {"t": 1}, 3, None, True, 1.5, "", "\ud83d")
RAW_TOKENS: tuple[bytes, ...] = (
    b'"\\ud83d"',
    b"1e999",
    b"-1e999",
    b"NaN",
    b"Infinity",
    b"99999999999999999999999999999",
    b'{"type":[1]}',
    b'{"type":{}}\n',
    b"[" * 2000,
    b"\x1b]8;;http://x\x07",
    b"\x1b[",
    b"\xff\xfe",
    b"\xed\xa0\xbd",  # a surrogate encoded as UTF-8 bytes (invalid)
    b"\xef\xbb\xbf",
    b"\n",
    b"\r\n",
    b"TASK_RESULT:",
    b"TASK_RESULT_END\n",
    b"GRADE_RESULT:",
    b"```json\n",
    b"{",
    b"}",
    b'"',
    b"\\",
    b"\x00",
)


@dataclass
class Counts:
    inputs: int = 0
    escapes: int = 0
    reports: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


class Seeds:
    """Seed lines, whole and parsed, by the format they were printed in."""

    def __init__(self, directories: tuple[Path, ...] = SEED_DIRS) -> None:
        self.lines: list[bytes] = []
        self.objects: list[bytes] = []
        for directory in directories:
            if directory.is_dir():
                for path in sorted(directory.iterdir()):
                    if path.suffix in (".jsonl", ".log"):
                        self._add(path.read_bytes())
        if not self.lines:
            raise SystemExit("no seed transcripts found")

    def _add(self, data: bytes) -> None:
        for line in data.splitlines(keepends=True):
            self.lines.append(line)
            if line.lstrip().startswith(b"{") and len(line) <= STRUCTURED_LINE_LIMIT:
                self.objects.append(line)


def _slots(value: object, found: list[tuple[Any, Any]]) -> None:
    """Every (container, key) in a parsed JSON value, depth first."""
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((value, key))
            _slots(item, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((value, index))
            _slots(item, found)


def _structured(rng: random.Random, seeds: Seeds) -> bytes:
    """A seed event with one to three of its values swapped for hostile ones."""
    line = rng.choice(seeds.objects)
    try:
        event = json.loads(line)
    except ValueError:
        return line
    slots: list[tuple[Any, Any]] = []
    _slots(event, slots)
    if isinstance(event, dict) and rng.random() < 0.2:
        event["type"] = rng.choice(HOSTILE_TYPES)
    for _ in range(rng.randint(1, 3)):
        if not slots:
            break
        container, key = rng.choice(slots)
        if rng.random() < 0.1:
            container[key] = DEEP_MARK if rng.random() < 0.05 else [container[key]]
        else:
            container[key] = rng.choice(HOSTILE_VALUES)
    return json.dumps(event).encode().replace(f'"{DEEP_MARK}"'.encode(), DEEP) + b"\n"


def _byte_mutated(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return rng.choice(RAW_TOKENS)
    at = rng.randrange(len(data) + 1)
    choice = rng.random()
    if choice < 0.35:
        return data[:at] + rng.choice(RAW_TOKENS) + data[at:]
    if choice < 0.55:
        return data[:at] + data[at + rng.randint(1, 64) :]
    if choice < 0.75 and at < len(data):
        return data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
    if choice < 0.85:
        return data[:at]
    end = min(len(data), at + rng.randint(1, 256))
    return data[:end] + data[at:end] + data[end:]


def transcript(rng: random.Random, seeds: Seeds) -> bytes:
    """One fuzzed transcript: seed lines, some structurally mutated, then byte mutations."""
    parts = []
    for _ in range(rng.randint(1, 6)):
        choice = rng.random()
        if choice < 0.5 and seeds.objects:
            parts.append(_structured(rng, seeds))
        elif choice < 0.6:
            value = rng.choice(HOSTILE_VALUES)
            parts.append(value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b"")
        else:
            parts.append(rng.choice(seeds.lines))
    data = b"".join(parts)
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        data = _byte_mutated(rng, data)
    return data


def chunks(rng: random.Random, data: bytes) -> Iterator[bytes]:
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randint(0, 3)))
    start = 0
    for cut in [*cuts, len(data)]:
        yield data[start:cut]
        start = cut


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _integers(value: object) -> Iterator[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _integers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _integers(item)


def _check_wire(value: dict[str, Any]) -> None:
    """What a status write sends: UTF-8 JSON, no terminal control, int64 counts."""
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    for text in _strings(value):
        if agent_text.clean(text) != text:
            raise AssertionError(f"a terminal control or surrogate reached the wire: {text!r:.200}")
    for number in _integers(value):
        if not -agent_text.MAX_COUNT <= number <= agent_text.MAX_COUNT:
            raise AssertionError(f"an integer beyond int64 reached the wire: {number}")


def _status(verdict: ReaderVerdict) -> PhaseResourceStatus:
    run = resolution.RunFacts(
        exit_code=0, stream_intact=True, agent_cli_error=verdict.agent_cli_error
    )
    result = phase.resolve_phase(
        report=verdict.report,
        run=run,
        output=[],
        recovery=RecoveryContext(phase_name="fuzz", last_message=verdict.last_message),
        now=NOW,
    )
    return phase_status.finished(
        PhaseResourceStatus(),
        verdict=verdict,
        run=run,
        result=result,
        stored={},
        generation=1,
        now=NOW,
    )


def check_one(
    data: bytes, transcript_format: TranscriptFormat, rng: random.Random, *, deep: bool = True
) -> str:
    """Read ``data`` and check what the reader says; with ``deep``, also the Phase status
    made of it and what a grader's reader says. The report's state."""
    reader = TranscriptReader(transcript_format)
    for chunk in chunks(rng, data):
        reader.feed(chunk)
    verdict = reader.close()
    wire: dict[str, Any] = {"report": verdict.report.model_dump(mode="json", by_alias=True)}
    report = Report.model_validate(wire["report"])
    if verdict.agent_cli_error is not None:
        wire["error"] = verdict.agent_cli_error.model_dump(mode="json", by_alias=True)
        SystemFailure.model_validate(wire["error"])
    if verdict.usage is not None:
        wire["usage"] = verdict.usage.model_dump(mode="json", by_alias=True)
        Usage.model_validate(wire["usage"])
    wire["lastMessage"] = verdict.last_message
    _check_wire(wire)
    if not deep:
        return report.state.value
    status = _status(verdict).model_dump(mode="json", by_alias=True, exclude_none=True)
    PhaseResourceStatus.model_validate(status)
    _check_wire(status)
    grader = GradeReader(transcript_format)
    for chunk in chunks(rng, data):
        grader.feed(chunk)
    graded = grader.close()
    grade = Grade.model_validate(graded.grade.model_dump(mode="json", by_alias=True))
    wire = grade.model_dump(mode="json", by_alias=True)
    if graded.grader_cli_error is not None:
        SystemFailure.model_validate(graded.grader_cli_error.model_dump(mode="json"))
    if graded.usage is not None:
        wire["spent"] = Usage.model_validate(graded.usage.model_dump(mode="json")).model_dump(
            mode="json"
        )
    _check_wire(wire)
    return report.state.value


def fuzz(
    transcript_format: TranscriptFormat,
    *,
    inputs: int,
    seed: int,
    seeds: Seeds,
    crash_dir: Path | None,
    deep_every: int = 1,
    progress: Callable[[Counts], None] | None = None,
) -> Counts:
    rng = random.Random(f"{seed}/{transcript_format}")
    counts = Counts()
    started = time.monotonic()
    for number in range(inputs):
        data = transcript(rng, seeds)
        counts.inputs += 1
        try:
            deep = number % deep_every == 0
            counts.reports[check_one(data, transcript_format, rng, deep=deep)] += 1
        except Exception:  # the very thing looked for: reported, written down, counted
            counts.escapes += 1
            if crash_dir is not None:
                crash_dir.mkdir(parents=True, exist_ok=True)
                name = f"{transcript_format}-{seed}-{number}"
                (crash_dir / f"{name}.log").write_bytes(data)
                (crash_dir / f"{name}.txt").write_text(traceback.format_exc())
            if counts.escapes <= 3:
                print(f"{transcript_format}: input {number} escaped:", file=sys.stderr)
                traceback.print_exc()
        if progress is not None and number % 50_000 == 49_999:
            counts.seconds = time.monotonic() - started
            progress(counts)
    counts.seconds = time.monotonic() - started
    return counts


def _line(transcript_format: TranscriptFormat, counts: Counts) -> str:
    rate = counts.inputs / counts.seconds if counts.seconds else 0.0
    states = ", ".join(f"{state} {n}" for state, n in sorted(counts.reports.items()))
    return (
        f"{transcript_format:12} inputs {counts.inputs:>9}  escapes {counts.escapes}  "
        f"{rate:7.0f}/s  {counts.seconds:7.0f} s  reports: {states}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs per format")
    parser.add_argument(
        "--format",
        action="append",
        choices=[f.value for f in TranscriptFormat],
        help="a format to fuzz (repeatable; default: every format)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--deep-every",
        type=int,
        default=1,
        metavar="N",
        help="build the Phase status and read with the grader's reader for every Nth input "
        "(the reader's own verdict is checked for every input)",
    )
    parser.add_argument(
        "--seeds",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="another folder of seed transcripts (*.jsonl, *.log), read only",
    )
    parser.add_argument("--crash-dir", type=Path, default=Path("/tmp/fuzz-reader-crashes"))
    args = parser.parse_args(argv)
    seeds = Seeds((*SEED_DIRS, *args.seeds))
    chosen = [TranscriptFormat(f) for f in args.format] if args.format else list(TranscriptFormat)
    print(f"{len(seeds.lines)} seed lines ({len(seeds.objects)} JSON objects)", flush=True)
    escaped = 0
    for transcript_format in chosen:

        def progress(counts: Counts, f: TranscriptFormat = transcript_format) -> None:
            print(f"  ... {_line(f, counts)}", flush=True)

        counts = fuzz(
            transcript_format,
            inputs=args.inputs,
            seed=args.seed,
            seeds=seeds,
            crash_dir=args.crash_dir,
            deep_every=args.deep_every,
            progress=progress,
        )
        print(_line(transcript_format, counts), flush=True)
        escaped += counts.escapes
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
