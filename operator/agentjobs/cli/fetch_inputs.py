"""`agentjobs fetch-inputs`: the init container that prepares a phase's workspace."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import tempfile
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.kube import in_pod
from agentjobs.models.repositories import PhaseRepository
from agentjobs.models.storage import HandoffRef
from agentjobs.sidecars import fetcher, hydration

HELP = "(in a phase pod) create the workspace and fetch the previous phase's artifacts"
DESCRIPTION = (
    "Create artifacts/output and artifacts/input, and download the artifacts the previous "
    "phase's hand-off manifest lists into artifacts/input, verifying the manifest's and each "
    "file's SHA-256."
)
WAIT_SECONDS = 120.0
REPOSITORIES = TypeAdapter(list[PhaseRepository])
TERMINATION_LOG = Path("/dev/termination-log")


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
        "--repositories",
        metavar="JSON",
        help="(R63) the Phase's repositories, to check out under the workspace before the agent",
    )
    parser.add_argument("--workspace", type=Path, default=Path(in_pod.WORKSPACE), metavar="DIR")
    parser.add_argument(
        "--git-credentials", type=Path, default=Path(in_pod.GIT_CREDENTIALS), metavar="DIR"
    )
    parser.add_argument(
        "--checkouts-file", type=Path, default=Path(in_pod.CHECKOUTS_FILE), metavar="FILE"
    )
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
        repositories = REPOSITORIES.validate_json(args.repositories or "[]")
        handed = any(r.handed and r.handed.bundle for r in repositories)
        store = PresignedStore.from_environment() if inputs or revision or handed else None
        fetcher.fetch(
            store,
            inputs,
            input_dir=args.input_dir,
            output_dir=args.output_dir,
            revision=revision,
        )
        if repositories:
            # The root filesystem is read-only: scratch space on the checkouts' own volume.
            args.checkouts_file.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=args.checkouts_file.parent) as scratch:
                hydration.hydrate(
                    hydration.bundle_fetcher(store) if store else None,
                    repositories,
                    workspace=args.workspace,
                    credentials_root=args.git_credentials,
                    started_file=args.checkouts_file,
                    scratch=Path(scratch),
                    changes=Path(in_pod.CHANGES),
                )
    except hydration.CheckoutFailed as failed:
        return _checkout_failed(failed)
    except (OSError, ValueError, ValidationError, StorageError, TimeoutError) as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 1
    return 0


def _checkout_failed(failed: hydration.CheckoutFailed) -> int:
    """R62 before the agent: the server's words as the container's termination message, and
    an exit code that says which fault, for the operator to classify."""
    print(f"agentjobs: error: {failed}", file=sys.stderr)
    with contextlib.suppress(OSError):  # outside a pod: the standard error says it
        TERMINATION_LOG.write_text(str(failed))
    codes = in_pod.CHECKOUT_EXIT_CODES
    return codes.get(failed.failure.fault.value, codes["other"])
