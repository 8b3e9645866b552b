"""The input fetcher: an init container that prepares the workspace (R35).

It creates ``artifacts/output/`` and ``artifacts/input/`` and downloads the
previous phase's artifacts into ``artifacts/input/``, each checked against
its recorded SHA-256; a mismatch fails the pod rather than hand the agent a
file it was not meant to see. A storage outage is retried with backoff.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

from agentjobs.adapters.object_store import StorageError
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.logic import handoff, pod_placement
from agentjobs.models.storage import InputArtifact, ObjectLocation

logger = logging.getLogger("agentjobs.fetcher")
MAX_BACKOFF_SECONDS = 10.0


def wait_for(path: Path, *, timeout: float) -> None:
    """Wait until ``path`` exists (the harvester's readiness), or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout:.0f} s")
        time.sleep(0.05)


def fetch(
    store: PresignedStore | None,
    inputs: Sequence[InputArtifact],
    *,
    input_dir: Path,
    output_dir: Path,
) -> None:
    for directory in (output_dir, input_dir):
        directory.mkdir(parents=True, exist_ok=True)
        # setgid and group-writable: an agent of any uid shares the pod's fsGroup.
        directory.chmod(pod_placement.SHARED_DIRECTORY_MODE)
    for artifact in inputs:
        assert store is not None, "inputs to fetch but no storage configured"
        destination = input_dir / handoff.relative_artifact_path(artifact.path)
        destination.parent.mkdir(parents=True, exist_ok=True)
        location = ObjectLocation.parse(artifact.url)
        backoff = 0.5
        while True:
            try:
                store.download(location, destination, sha256=artifact.sha256)
                break
            except StorageError as error:
                logger.warning(
                    "fetch of %s failed: %s; retrying in %.1f s", artifact.path, error, backoff
                )
                time.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
        logger.info("fetched %s (%d bytes)", artifact.path, artifact.size)
