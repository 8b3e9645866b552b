"""R35: where the next phase finds the previous phase's artifacts.

Artifact paths come from a listing of another pod's directory and, later,
from object names in S3; a path that could land outside the input
directory (absolute, ``..``, empty parts) is refused rather than cleaned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from agentjobs.logic.credentials import Root
from agentjobs.models.contract import Artifact
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import ObjectLocation

WORKSPACE = PurePosixPath("/workspace")
OUTPUT_DIR = WORKSPACE / "artifacts" / "output"
INPUT_DIR = WORKSPACE / "artifacts" / "input"


class UnsafeArtifactPath(ValueError):
    """An artifact path that would escape the directory it belongs in."""


def relative_artifact_path(path: str) -> PurePosixPath:
    """``path`` as a safe relative path, or :class:`UnsafeArtifactPath`."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise UnsafeArtifactPath(f"unsafe artifact path: {path!r}")
    if "\x00" in path:
        raise UnsafeArtifactPath(f"unsafe artifact path: {path!r}")
    return PurePosixPath(*parts)


def handoff_destinations(
    previous: Sequence[Artifact], *, input_dir: PurePosixPath = INPUT_DIR
) -> list[tuple[Artifact, PurePosixPath]]:
    """Each artifact of the previous phase with the path it takes in the next one."""
    return [(artifact, input_dir / relative_artifact_path(artifact.path)) for artifact in previous]


def readable_roots(spec: PhaseSpec, *, execution_root: str) -> tuple[Root, ...]:
    """What a phase's sidecars may read besides their own attempt: the inputs its spec
    names, and only those inside its own Execution's objects (``execution_root``), so
    that a Phase written by hand cannot name another Execution's or namespace's keys."""
    roots = []
    for item in spec.inputs or []:
        try:
            location = ObjectLocation.parse(item.url)
        except ValueError:
            continue
        if location.key.startswith(execution_root + "/"):
            roots.append(Root(location.bucket, location.key))
    return tuple(roots)
