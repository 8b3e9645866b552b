"""`agentjobs fetch-inputs`: the init container that prepares a phase's workspace."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from agentjobs.adapters.object_store import StorageError
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.logic.pods import INPUT_DIRECTORY, OUTPUT_DIRECTORY
from agentjobs.models.storage import InputArtifact
from agentjobs.sidecars import fetcher

HELP = "(in a phase pod) create the workspace and fetch the previous phase's artifacts"
DESCRIPTION = (
    "Create artifacts/output and artifacts/input, and download the artifacts listed in "
    "INPUTS (JSON) into artifacts/input, verifying each SHA-256."
)
_INPUTS = TypeAdapter(list[InputArtifact])
WAIT_SECONDS = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--inputs",
        type=Path,
        metavar="FILE",
        help="JSON list of {path, url, sha256, size}; none when absent",
    )
    parser.add_argument("--input-dir", type=Path, default=Path(INPUT_DIRECTORY), metavar="DIR")
    parser.add_argument("--output-dir", type=Path, default=Path(OUTPUT_DIRECTORY), metavar="DIR")
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
            _INPUTS.validate_json(args.inputs.read_bytes())
            if args.inputs and args.inputs.exists()
            else []
        )
        store = PresignedStore.from_environment() if inputs else None
        fetcher.fetch(store, inputs, input_dir=args.input_dir, output_dir=args.output_dir)
    except (OSError, ValueError, ValidationError, StorageError, TimeoutError) as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 1
    return 0
