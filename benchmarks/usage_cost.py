"""What reading usage live (R68-R71) costs the transcript reader: this tree's reader beside
the reader as it was before it read usage, on the same transcripts, in one process.

The earlier reader is taken from git (``--before``, default 76e97a6, the last commit
before R68) and imported under another package name; for each agent CLI's format a
transcript with usage where that CLI reports it (benchmarks/parser.py's shapes) is read by
both, alternately, best of ``--runs`` each, and the throughput ratio is printed.

    python benchmarks/usage_cost.py [--size-mb 64] [--runs 5] [--before REV]
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.limits import ExecutionLimits
from benchmarks.parser import CLI_SHAPES, READ_CHUNK, generate_transcript

REPO = Path(__file__).resolve().parents[1]
BEFORE = "76e97a6"
IMPORT = re.compile(r"\b(from|import) agentjobs\b")


def reader_at(revision: str, into: Path) -> Any:
    """The TranscriptReader class of ``revision``, as package ``agentjobs_before``."""
    archive = subprocess.run(
        ["git", "archive", revision, "operator/agentjobs"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "agentjobs_before"
    (into / "operator" / "agentjobs").rename(package)
    for source in package.rglob("*.py"):
        source.write_text(IMPORT.sub(r"\1 agentjobs_before", source.read_text()))
    sys.path.insert(0, str(into))
    return importlib.import_module("agentjobs_before.contract.reading.transcript_reader")


def read(path: Path, make_reader: Any) -> float:
    reader = make_reader()
    start = time.perf_counter()
    with path.open("rb", buffering=0) as log:
        while chunk := log.read(READ_CHUNK):
            reader.feed(chunk)
    verdict = reader.close()
    seconds = time.perf_counter() - start
    assert verdict.report.state.value == "success", verdict
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=64)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", default=BEFORE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        before = reader_at(args.before, Path(scratch) / "before")
        # A limit that is never passed: the reader checks it after every event that spends.
        watched = ExecutionLimits(max_tokens=10**15)
        print(f"before: {args.before}, best of {args.runs} alternated runs each")
        for transcript_format in CLI_SHAPES:
            path = Path(scratch) / f"{transcript_format.value}.jsonl"
            generate_transcript(path, args.size_mb, transcript_format)
            megabytes = path.stat().st_size / 1e6
            old_format = before.TranscriptFormat(transcript_format.value)
            readers = {
                "before": lambda f=old_format: before.TranscriptReader(f),
                "now": lambda f=transcript_format: TranscriptReader(f),
                "now, with a limit": lambda f=transcript_format: TranscriptReader(
                    f, limits=watched
                ),
            }
            best = dict.fromkeys(readers, float("inf"))
            for _ in range(args.runs):
                for name, make in readers.items():
                    best[name] = min(best[name], read(path, make))
            path.unlink()
            rates = {name: megabytes / seconds for name, seconds in best.items()}
            print(
                f"{transcript_format.value:<12} {megabytes:.0f} MB: "
                + ", ".join(f"{name} {rate:.1f} MB/s" for name, rate in rates.items())
                + f"; now/before {rates['now'] / rates['before']:.3f}x, "
                f"with a limit/before {rates['now, with a limit'] / rates['before']:.3f}x"
            )


if __name__ == "__main__":
    main()
