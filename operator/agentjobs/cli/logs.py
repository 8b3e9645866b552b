"""`agentjobs logs NAMESPACE/EXECUTION`: print the stored transcripts of an execution's phases.

The operator stores each attempt's agent log whole before it checkpoints the
run, so the transcript outlives the pod: this prints it byte for byte, after
checking it against the SHA-256 the attempt's record holds, so what it prints
is the log the verdict was read from, or nothing and an error.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.cli import execution_phases
from agentjobs.models.retry import TranscriptRef
from agentjobs.models.storage import ObjectLocation

HELP = "print the stored transcripts of an execution's phases"
DESCRIPTION = (
    "Print the agent log each phase's last attempt left in storage (or attempt N's), checked "
    "against its SHA-256, byte for byte: it outlives the pod. With several phases, each "
    "transcript follows a '==> <phase> (attempt <n>) <==' line. Uses the AGENTJOBS_S3_* "
    "settings."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("execution", metavar="NAMESPACE/EXECUTION")
    parser.add_argument("--phase", metavar="NAME", help="only this phase's transcript")
    parser.add_argument("--attempt", type=int, metavar="N", help="attempt N (default: the last)")


def _chosen(
    phases: list[execution_phases.PhaseRecord], attempt: int | None
) -> list[tuple[str, int, TranscriptRef]]:
    """Each phase's transcript to print; LookupError for one that has none stored."""
    chosen = []
    for spec, status in phases:
        records = [r for r in status.attempts if attempt is None or r.number == attempt]
        if not records:
            which = f"attempt {attempt}" if attempt is not None else "an ended attempt"
            raise LookupError(f"phase {spec.name} has no {which} yet")
        record = records[-1]
        if record.transcript is None:
            raise LookupError(
                f"phase {spec.name} attempt {record.number} stored no transcript "
                "(its agent never ran, or the operator runs without storage)"
            )
        chosen.append((spec.name, record.number, record.transcript))
    return chosen


def _print(store: ObjectStore, transcripts: list[tuple[str, int, TranscriptRef]]) -> None:
    out = sys.stdout.buffer
    for name, number, transcript in transcripts:
        with tempfile.TemporaryDirectory(prefix="agentjobs-logs-") as directory:
            copy = Path(directory) / "transcript.log"
            store.download(ObjectLocation.parse(transcript.url), copy, sha256=transcript.sha256)
            if len(transcripts) > 1:
                out.write(f"==> {name} (attempt {number}) <==\n".encode())
            with copy.open("rb") as source:
                shutil.copyfileobj(source, out)
            out.flush()


def run(args: argparse.Namespace) -> int:
    def act(phases: list[execution_phases.PhaseRecord]) -> None:
        _print(ObjectStore(StorageSettings.from_environment()), _chosen(phases, args.attempt))

    return execution_phases.run_on_phases(args.execution, args.phase, act)
