"""What the harvester uploads and what its manifest says, from a listing (R28, R29).

Pure: the harvester (I/O) lists the output directory, asks here which files
changed since their last upload, uploads them, and writes the manifest this
module builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentjobs.logic import artifact_rule
from agentjobs.models.output import EntryKind, OutputEntry
from agentjobs.models.storage import ArtifactManifest, ManifestEntry


@dataclass(frozen=True)
class Uploaded:
    """A file as it was when its bytes were last stored."""

    size: int
    modified_ns: int
    sha256: str
    content_type: str


@dataclass(frozen=True)
class SyncPlan:
    to_upload: list[OutputEntry]
    empty: list[OutputEntry]
    skipped: list[artifact_rule.SkippedEntry]
    files: list[OutputEntry]


def plan_sync(entries: Sequence[OutputEntry], uploaded: Mapping[str, Uploaded]) -> SyncPlan:
    """Collectable files whose size or modification time changed since their upload."""
    files, empty, skipped, _ = artifact_rule.sort_entries(entries)
    to_upload = [
        entry
        for entry in files
        if (previous := uploaded.get(entry.path)) is None
        or (previous.size, previous.modified_ns) != (entry.size, entry.modified_ns)
    ]
    return SyncPlan(to_upload=to_upload, empty=empty, skipped=skipped, files=files)


def manifest(plan: SyncPlan, uploaded: Mapping[str, Uploaded], *, final: bool) -> ArtifactManifest:
    """The manifest of one sync: stored files, empty files and skipped entries."""
    entries = [
        ManifestEntry(
            path=entry.path,
            kind=EntryKind.FILE,
            size=uploaded[entry.path].size,
            sha256=uploaded[entry.path].sha256,
            content_type=uploaded[entry.path].content_type,
            uploaded=True,
        )
        for entry in plan.files
        if entry.path in uploaded
    ]
    entries += [ManifestEntry(path=e.path, kind=EntryKind.FILE, size=0) for e in plan.empty]
    entries += [ManifestEntry(path=s.path, kind=s.kind, skipped=s.reason) for s in plan.skipped]
    return ArtifactManifest(final=final, entries=sorted(entries, key=lambda e: e.path))


def listing(manifest: ArtifactManifest) -> list[OutputEntry]:
    """The output directory as the manifest recorded it, for the artifact rule."""
    return [
        OutputEntry(path=entry.path, kind=entry.kind, size=entry.size) for entry in manifest.entries
    ]
