"""`agentjobs fetch-inputs`: the init container that prepares a phase's workspace."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from pydantic import ValidationError

from agentjobs.adapters.object_store import StorageError
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.kube import in_pod
from agentjobs.models.storage import HandoffRef
from agentjobs.sidecars import fetcher

HELP = "(in a phase pod) create the workspace and fetch the previous phase's artifacts"
DESCRIPTION = (
    "Create artifacts/output and artifacts/input, and download the artifacts the previous "
    "phase's hand-off manifest lists into artifacts/input, verifying the manifest's and each "
    "file's SHA-256."
)
WAIT_SECONDS = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--inputs-manifest",
        metavar="URL",
        help="s3://bucket/key of the previous phase's artifacts.json; nothing to fetch without",
    )
    parser.add_argument(
        "--inputs-sha256", metavar="HEX", help="the SHA-256 that manifest must have"
    )
    parser.add_argument(
        "--previous-manifest",
        metavar="URL",
        help="(a revised attempt, R42) the previous attempt's artifacts.json, into --previous-dir",
    )
    parser.add_argument(
        "--previous-sha256", metavar="HEX", help="the SHA-256 that manifest must have"
    )
    parser.add_argument(
        "--feedback",
        type=Path,
        metavar="FILE",
        help="the evaluation file to copy to --feedback-dir",
    )
    parser.add_argument("--input-dir", type=Path, default=Path(in_pod.INPUT), metavar="DIR")
    parser.add_argument("--previous-dir", type=Path, default=Path(in_pod.PREVIOUS), metavar="DIR")
    parser.add_argument("--feedback-dir", type=Path, default=Path(in_pod.FEEDBACK), metavar="DIR")
    parser.add_argument("--output-dir", type=Path, default=Path(in_pod.OUTPUT), metavar="DIR")
    parser.add_argument(
        "--wait-for",
        type=Path,
        metavar="FILE",
        help="first wait (up to two minutes) for FILE, the harvester's signal that it is ready",
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        if args.wait_for is not None:
            fetcher.wait_for(args.wait_for, timeout=WAIT_SECONDS)
        inputs = (
            HandoffRef(manifest=args.inputs_manifest, sha256=args.inputs_sha256 or "", count=0)
            if args.inputs_manifest
            else None
        )
        revision = None
        if args.previous_manifest:
            previous = HandoffRef(
                manifest=args.previous_manifest, sha256=args.previous_sha256 or "", count=0
            )
            revision = fetcher.Revision(
                previous, args.previous_dir, args.feedback, args.feedback_dir
            )
        store = PresignedStore.from_environment() if inputs or revision else None
        fetcher.fetch(
            store,
            inputs,
            input_dir=args.input_dir,
            output_dir=args.output_dir,
            revision=revision,
        )
    except (OSError, ValueError, ValidationError, StorageError, TimeoutError) as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 1
    return 0
