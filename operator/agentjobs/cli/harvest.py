"""`agentjobs harvest`: the sidecar that stores a phase's output directory in S3."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.kube import in_pod
from agentjobs.models import output
from agentjobs.sidecars import harvester

HELP = "(in a phase pod) keep the output directory stored in S3 until SIGTERM"
DESCRIPTION = (
    "Sync the output directory to S3 periodically and once more on SIGTERM. "
    "It holds no storage credentials: it trades the token in AGENTJOBS_CREDENTIALS_TOKEN "
    "at AGENTJOBS_CREDENTIALS_URL (verified with AGENTJOBS_CREDENTIALS_CA) for presigned URLs."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", required=True, metavar="KEY", help="the attempt's key prefix in the bucket"
    )
    parser.add_argument("--bucket", required=True, metavar="NAME", help="the bucket")
    parser.add_argument("--directory", type=Path, default=Path(in_pod.OUTPUT), metavar="DIR")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds between periodic syncs (default: %(default)s)",
    )
    for flag, default, what in (
        ("--max-files", output.DEFAULT_MAX_FILES, "files per phase"),
        ("--max-file-bytes", output.DEFAULT_MAX_FILE_BYTES, "bytes per file"),
        ("--max-phase-bytes", output.DEFAULT_MAX_PHASE_BYTES, "bytes per phase"),
    ):
        parser.add_argument(
            flag,
            type=int,
            default=default,
            metavar="N",
            help=f"store at most N {what}; the rest are recorded as skipped (default: %(default)s)",
        )
    parser.add_argument(
        "--ready-file",
        type=Path,
        metavar="FILE",
        help="create FILE once SIGTERM will be answered with a final sync",
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        store = PresignedStore.from_environment()
    except StorageError as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 2
    worker = harvester.Harvester(
        store,
        directory=args.directory,
        bucket=args.bucket,
        attempt_root=args.root,
        limits=output.HarvestLimits(
            max_files=args.max_files,
            max_file_bytes=args.max_file_bytes,
            max_phase_bytes=args.max_phase_bytes,
        ),
    )
    if not harvester.run(worker, interval=args.interval, ready_file=args.ready_file):
        print(f"agentjobs: error: the last sync was not made: {worker.failure}", file=sys.stderr)
        return 1
    return 0
