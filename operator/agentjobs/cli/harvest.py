"""`agentjobs harvest`: the sidecar that stores a phase's output directory in S3."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from agentjobs.adapters.object_store import ObjectStore, StorageError, StorageSettings
from agentjobs.logic.pods import OUTPUT_DIRECTORY
from agentjobs.sidecars import harvester

HELP = "(in a phase pod) keep the output directory stored in S3 until SIGTERM"
DESCRIPTION = (
    "Sync the output directory to S3 periodically and once more on SIGTERM. "
    "Storage settings come from AGENTJOBS_S3_* environment variables."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root", required=True, metavar="KEY", help="the attempt's key prefix in the bucket"
    )
    parser.add_argument(
        "--bucket", metavar="NAME", help="the bucket (default: AGENTJOBS_S3_BUCKET)"
    )
    parser.add_argument("--directory", type=Path, default=Path(OUTPUT_DIRECTORY), metavar="DIR")
    parser.add_argument(
        "--interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="seconds between periodic syncs (default: %(default)s)",
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
        settings = StorageSettings.from_environment()
    except StorageError as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 2
    worker = harvester.Harvester(
        ObjectStore(settings),
        directory=args.directory,
        bucket=args.bucket or settings.bucket,
        attempt_root=args.root,
    )
    harvester.run(worker, interval=args.interval, ready_file=args.ready_file)
    return 0
