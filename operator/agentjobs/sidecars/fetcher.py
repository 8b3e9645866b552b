"""The input fetcher: an init container that prepares the workspace (R35).

It creates ``artifacts/output/`` and ``artifacts/input/`` and downloads the
previous phase's artifacts into ``artifacts/input/``; for a revised attempt of an
outcome (R42) also its previous attempt's files into ``artifacts/previous/`` and the
evaluation into ``artifacts/feedback/``. What to fetch is one
object, the previous phase's hand-off manifest, named with its SHA-256 in
the Phase's spec; every entry is checked (``contract/artifacts/handoff.py``: stored under
the handed-on attempt, landing under ``input/``) and every file against its
own SHA-256 before anything is written, and each file is written through
directory descriptors that follow no symlink (``adapters/input_dir.py``). A
mismatch or an unsafe entry fails the pod rather than hand the agent a file
it was not meant to see, or write one where it must not. A storage outage is
retried with backoff.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agentjobs.adapters import input_dir as destinations
from agentjobs.adapters import output_dir as directories
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.contract.artifacts import handoff
from agentjobs.kube import pod_placement
from agentjobs.models.storage import HandoffManifest, HandoffRef, ObjectLocation
from agentjobs.runtime import backoff

logger = logging.getLogger("agentjobs.fetcher")
T = TypeVar("T")


class HandoffRefused(ValueError):
    """The hand-off manifest is missing or not the one the Phase's spec names."""


def wait_for(path: Path, *, timeout: float) -> None:
    """Wait until ``path`` exists (the harvester's readiness), or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {timeout:.0f} s")
        time.sleep(0.05)


def _retrying(operation: Callable[[], T], what: str) -> T:
    delays = backoff.STORAGE.delays()
    while True:
        try:
            return operation()
        except StorageError as error:
            delay = next(delays)
            logger.warning("%s failed: %s; retrying in %.1f s", what, error, delay)
            time.sleep(delay)


def read_manifest(store: PresignedStore, inputs: HandoffRef) -> HandoffManifest:
    """The hand-off manifest ``inputs`` names, refused unless it hashes to its SHA-256."""
    location = ObjectLocation.parse(inputs.manifest)
    data = _retrying(lambda: store.get_bytes(location), f"fetch of {inputs.manifest}")
    if data is None:
        raise HandoffRefused(f"the hand-off manifest {inputs.manifest} does not exist")
    digest = hashlib.sha256(data).hexdigest()
    if digest != inputs.sha256:
        raise HandoffRefused(
            f"{inputs.manifest} does not match its recorded SHA-256 "
            f"(expected {inputs.sha256}, got {digest})"
        )
    return HandoffManifest.model_validate_json(data)


@dataclass(frozen=True)
class Revision:
    """R42: what a revised attempt gets besides its inputs: its previous attempt's files
    (that attempt's hand-off manifest) and the evaluation file, copied from its ConfigMap."""

    previous: HandoffRef
    previous_dir: Path
    feedback: Path | None
    feedback_dir: Path


def fetch(
    store: PresignedStore | None,
    inputs: HandoffRef | None,
    *,
    input_dir: Path,
    output_dir: Path,
    revision: Revision | None = None,
) -> None:
    directories_made = [output_dir, input_dir]
    if revision is not None:
        directories_made += [revision.previous_dir, revision.feedback_dir]
    for directory in directories_made:
        directory.mkdir(parents=True, exist_ok=True)
        descriptor = directories.open_root(directory)  # refused if a symlink is on the way
        try:
            # setgid and group-writable: an agent of any uid shares the pod's fsGroup.
            os.fchmod(descriptor, pod_placement.SHARED_DIRECTORY_MODE)
        finally:
            os.close(descriptor)
    if inputs is not None:
        assert store is not None, "inputs to fetch but no storage configured"
        _download(store, inputs, input_dir)
    if revision is not None:
        assert store is not None, "previous files to fetch but no storage configured"
        _download(store, revision.previous, revision.previous_dir)
        if revision.feedback is not None:
            target = revision.feedback_dir / revision.feedback.name
            target.write_bytes(revision.feedback.read_bytes())
            logger.info("wrote the evaluation to %s", target)


def _download(store: PresignedStore, inputs: HandoffRef, into: Path) -> None:
    """Every artifact the hand-off manifest ``inputs`` lists, checked, under ``into``."""
    plan = handoff.downloads(read_manifest(store, inputs), inputs)
    try:  # one request for every URL; on failure each download asks for its own
        store.prepare("GET", [item.location for item in plan])
    except StorageError as error:
        logger.warning("presigning inputs failed: %s", error)
    root = directories.open_root(into)
    try:
        for item in plan:
            shown = str(item.path)
            parent = destinations.open_parent(root, item.path.parts[:-1], shown=shown)
            try:
                destinations.clear_partial(parent, item.path.name)
                target = destinations.through(parent, item.path.name)
                _retrying(
                    lambda: store.download(item.location, target, sha256=item.sha256),  # noqa: B023
                    f"fetch of {shown}",
                )
            finally:
                os.close(parent)
            logger.info("fetched %s (%d bytes)", shown, item.size)
    finally:
        os.close(root)
