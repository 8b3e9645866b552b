"""What the harvester uploads and what its manifest says, from a listing (R28, R29).

Pure: the harvester (I/O) lists the output directory, asks here which files
changed since their last upload and which are over a cap, uploads them, and
writes the manifest this module builds.

Decisions where the issue is silent:

- Caps are applied to non-empty files in path order, then to empty ones
  (R57: ten thousand empty files never hide the deliverable), so the same
  tree always keeps the same files: the first ``max_files`` files (empty
  ones count: each is recorded and may be replaced by a recovered message), each at most
  ``max_file_bytes``, taken while their total stays within
  ``max_phase_bytes`` (a file that does not fit is skipped; a later smaller
  one may still fit).
- Defaults: 10,000 files (the issue's), 1 GiB per file (one presigned PUT
  takes up to 5 GiB; 1 GiB uploads in minutes and fits the next phase's
  workspace) and 4 GiB per phase (what the next phase downloads before its
  agent starts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentjobs.contract.artifacts import artifact_rule, handoff
from agentjobs.models.output import DEFAULT_HARVEST_LIMITS, EntryKind, HarvestLimits, OutputEntry
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


def safe_path(path: str) -> bool:
    return handoff.is_safe_path(path)


def apply_limits(
    files: Sequence[OutputEntry], limits: HarvestLimits
) -> tuple[list[OutputEntry], list[artifact_rule.SkippedEntry]]:
    """The files within the caps (non-empty ones first, each in path order), and the others
    with the cap they pass."""
    kept: list[OutputEntry] = []
    skipped: list[artifact_rule.SkippedEntry] = []
    total = 0
    for entry in sorted(files, key=lambda item: (item.size == 0, item.path)):
        reason = None
        if not safe_path(entry.path):
            reason = "its path cannot be stored safely; not read"
        elif len(kept) >= limits.max_files:
            reason = f"over the cap of {limits.max_files} files per phase; not stored"
        elif entry.size > limits.max_file_bytes:
            reason = (
                f"{entry.size} bytes, over the cap of {limits.max_file_bytes} bytes per file; "
                "not stored"
            )
        elif total + entry.size > limits.max_phase_bytes:
            reason = (
                f"{entry.size} bytes would pass the cap of {limits.max_phase_bytes} bytes "
                "per phase; not stored"
            )
        if reason is None:
            kept.append(entry)
            total += entry.size
        else:
            skipped.append(artifact_rule.SkippedEntry(entry.path, reason, entry.kind))
    return kept, skipped


def plan_sync(
    entries: Sequence[OutputEntry],
    uploaded: Mapping[str, Uploaded],
    limits: HarvestLimits = DEFAULT_HARVEST_LIMITS,
) -> SyncPlan:
    """Collectable files within the caps whose size or modification time changed since
    their upload."""
    files, empty, skipped, _ = artifact_rule.sort_entries(entries)
    kept, over = apply_limits([*files, *empty], limits)
    files = [entry for entry in kept if entry.size > 0]
    empty = [entry for entry in kept if entry.size == 0]
    to_upload = [
        entry
        for entry in files
        if (previous := uploaded.get(entry.path)) is None
        or (previous.size, previous.modified_ns) != (entry.size, entry.modified_ns)
    ]
    return SyncPlan(to_upload=to_upload, empty=empty, skipped=skipped + over, files=files)


def manifest(
    plan: SyncPlan,
    uploaded: Mapping[str, Uploaded],
    *,
    final: bool,
    unreadable: Mapping[str, str] | None = None,
) -> ArtifactManifest:
    """The manifest of one sync: stored files, empty files and skipped entries.

    ``unreadable`` holds the files that failed when they were opened or read
    in this sync, with the reason: they are skipped, like any other entry.
    """
    failed = unreadable or {}
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
        if entry.path in uploaded and entry.path not in failed
    ]
    entries += [ManifestEntry(path=e.path, kind=EntryKind.FILE, size=0) for e in plan.empty]
    entries += [ManifestEntry(path=s.path, kind=s.kind, skipped=s.reason) for s in plan.skipped]
    entries += [
        ManifestEntry(path=path, kind=EntryKind.FILE, skipped=reason)
        for path, reason in failed.items()
    ]
    return ArtifactManifest(final=final, entries=sorted(entries, key=lambda e: e.path))


def listing(manifest: ArtifactManifest) -> list[OutputEntry]:
    """The output directory as the manifest recorded it, for the artifact rule.

    A skipped entry keeps its recorded reason, so that the Phase's status
    warns about it exactly once. The manifest was written inside the agent's
    pod: an uploaded file whose path is not safe is skipped, never trusted.
    """
    entries = []
    for entry in manifest.entries:
        problem = entry.skipped
        if problem is None and not safe_path(entry.path):
            problem = "its recorded path is not safe; not handed on"
        entries.append(
            OutputEntry(path=entry.path, kind=entry.kind, size=entry.size, problem=problem)
        )
    return entries
