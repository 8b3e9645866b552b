"""R35: where the next phase finds the previous phase's artifacts.

Artifact paths come from a listing of another pod's directory and, later,
from object names in S3; a path that could land outside the input
directory (absolute, ``..``, empty parts) is refused rather than cleaned.

The previous phase is handed on by one object, its ``artifacts.json``
(:class:`HandoffManifest`), named with its SHA-256 in the next Phase's spec:
the spec stays small however many files there are, and the fetcher trusts
no entry of the manifest it has not checked here. Every artifact must be
stored under the handed-on attempt's ``output/`` and land under the input
directory; a manifest with one entry that does not is refused whole.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentjobs.contract.artifacts.credentials import Root
from agentjobs.kube import in_pod
from agentjobs.models.contract import Artifact
from agentjobs.models.output import MAX_PATH_BYTES
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import (
    SHA256_PATTERN,
    HandoffManifest,
    HandoffRef,
    InputArtifact,
    ObjectLocation,
)

HANDOFF_MANIFEST = "artifacts.json"
OUTPUT_OBJECTS = "output"
# The first segment of this name in any key is followed by the namespace the key belongs to.
NAMESPACES = "namespaces"


class UnsafeArtifactPath(ValueError):
    """An artifact path that would escape the directory it belongs in."""


def is_safe_path(path: str) -> bool:
    """Whether ``path`` is relative, has no empty, ``.`` or ``..`` part, no NUL, and fits."""
    return (
        bool(path)
        and not path.startswith("/")
        and "\x00" not in path
        and len(path.encode("utf-8", "surrogatepass")) <= MAX_PATH_BYTES
        and all(part not in ("", ".", "..") for part in path.split("/"))
    )


def relative_artifact_path(path: str) -> PurePosixPath:
    """``path`` as a safe relative path, or :class:`UnsafeArtifactPath`."""
    if not is_safe_path(path):
        raise UnsafeArtifactPath(f"unsafe artifact path: {path!r}")
    return PurePosixPath(*path.split("/"))


def handoff_destinations(
    previous: Sequence[Artifact], *, input_dir: PurePosixPath | None = None
) -> list[tuple[Artifact, PurePosixPath]]:
    """Each artifact of the previous phase with the path it takes in the next one."""
    input_dir = input_dir or PurePosixPath(in_pod.INPUT)
    return [(artifact, input_dir / relative_artifact_path(artifact.path)) for artifact in previous]


def _clean_key(key: str) -> bool:
    return all(part not in ("", ".", "..") for part in key.split("/")) and "\x00" not in key


def handed_on_root(inputs: HandoffRef) -> tuple[str, str]:
    """The bucket and attempt root of the phase whose manifest ``inputs`` names."""
    try:
        location = ObjectLocation.parse(inputs.manifest)
    except ValueError as error:
        raise UnsafeArtifactPath(str(error)) from None
    root, _, name = location.key.rpartition("/")
    if name != HANDOFF_MANIFEST or not root or not _clean_key(location.key):
        raise UnsafeArtifactPath(f"not a hand-off manifest: {inputs.manifest!r}")
    return location.bucket, root


def key_namespace(key: str) -> str | None:
    """The namespace whose Execution's objects ``key`` lies under, if any."""
    parts = key.split("/")
    if NAMESPACES not in parts:
        return None
    at = parts.index(NAMESPACES)
    if len(parts) < at + 4 or parts[at + 2] != "executions" or not parts[at + 1]:
        return None
    return parts[at + 1]


def readable_roots(spec: PhaseSpec, *, namespace: str) -> tuple[Root, ...]:
    """What a phase's sidecars may read besides their own attempt: the hand-off manifest
    its spec names and the artifacts stored beside it (not the previous attempt's
    transcript), and each git bundle of work handed to it (R63), and only among the
    Executions' objects of its own namespace, so that a Phase written by hand cannot name
    another namespace's keys. A resumed execution's first phase reads its parent's (R48);
    the namespace is the boundary that holds, since a Phase names its own Execution and
    prefix in its spec."""
    roots: list[Root] = []
    if spec.inputs is not None:
        try:
            bucket, root = handed_on_root(spec.inputs)
        except UnsafeArtifactPath:
            pass
        else:
            if key_namespace(root) == namespace:
                roots += [
                    Root(bucket, f"{root}/{HANDOFF_MANIFEST}"),
                    Root(bucket, f"{root}/{OUTPUT_OBJECTS}"),
                ]
    for repository in spec.repositories or []:
        bundle = repository.handed.bundle if repository.handed else None
        if bundle is None:
            continue
        try:
            location = ObjectLocation.parse(bundle)
        except ValueError:
            continue
        if _clean_key(location.key) and key_namespace(location.key) == namespace:
            roots.append(Root(location.bucket, location.key))
    return tuple(roots)


def handoff_manifest(
    artifacts: Sequence[Artifact], stored: Mapping[str, tuple[str, str]]
) -> HandoffManifest:
    """R35: every stored artifact of a phase (``stored``: path -> url, sha256), in order."""
    return HandoffManifest(
        artifacts=[
            InputArtifact(path=a.path, url=stored[a.path][0], sha256=stored[a.path][1], size=a.size)
            for a in sorted(artifacts, key=lambda artifact: artifact.path)
            if a.path in stored
        ]
    )


@dataclass(frozen=True)
class Download:
    """One artifact to fetch: from where, to which path under the input directory."""

    location: ObjectLocation
    path: PurePosixPath
    sha256: str
    size: int


def downloads(manifest: HandoffManifest, inputs: HandoffRef) -> list[Download]:
    """The manifest's artifacts, each checked; :class:`UnsafeArtifactPath` for the first
    that is stored outside the handed-on ``output/``, would land outside the input
    directory, or is both a file and a directory of another."""
    bucket, root = handed_on_root(inputs)
    stored_under = f"{root}/{OUTPUT_OBJECTS}/"
    files: set[PurePosixPath] = set()
    directories: set[PurePosixPath] = set()
    result = []
    for artifact in manifest.artifacts:
        path = relative_artifact_path(artifact.path)
        try:
            location = ObjectLocation.parse(artifact.url)
        except ValueError as error:
            raise UnsafeArtifactPath(str(error)) from None
        if (
            location.bucket != bucket
            or not location.key.startswith(stored_under)
            or not _clean_key(location.key)
        ):
            raise UnsafeArtifactPath(
                f"{artifact.path!r} is stored outside the handed-on artifacts: {artifact.url!r}"
            )
        if not re.fullmatch(SHA256_PATTERN, artifact.sha256) or artifact.size < 0:
            raise UnsafeArtifactPath(f"{artifact.path!r} has no valid SHA-256 or size")
        parents = set(path.parents) - {PurePosixPath(".")}
        if path in files or path in directories or parents & files:
            raise UnsafeArtifactPath(f"{artifact.path!r} is listed twice or inside a file")
        files.add(path)
        directories |= parents
        result.append(Download(location, path, artifact.sha256, artifact.size))
    return result
