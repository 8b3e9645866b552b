"""R28-R35: what a phase leaves behind, from a listing of its output directory.

The listing is made by an adapter that never follows a symlink and never
reads outside the directory (R28); this module only decides, from paths,
kinds and sizes plus the agent's last message, which artifacts the phase has,
which ones the operator writes itself (recovered from the transcript), and
whether the phase must fail because nothing usable exists (R33).

Decisions where the contract is silent:

- Only regular files can be artifacts. A symlink, a FIFO, a socket or a
  device is recorded as skipped with a warning and never opened; so is an
  entry the lister or the harvester could not take (its ``problem``: a name
  that is not UTF-8, an unreadable file, a cap), one warning per entry.
- A failed, cancelled or interrupted phase keeps its non-empty files; its
  empty files are not recovered, since the table of R34 recovers the last
  message only when no non-empty file exists.
- A recovered artifact's title puts the kept marker before the recovery
  marker, so that it still ends with ``[recovered from transcript]`` (R31).
- R52's patches of unpushed work are kept as the phase's files are (failed:
  ``(kept from a failed phase)``, cancelled or interrupted: ``(partial)``); a
  completed phase lists only those of a repository whose push did not land (R64), the
  others being on their branch (see :mod:`agentjobs.contract.artifacts.unpushed_work`).
  A patch whose path an output file already has is not listed, with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from agentjobs.contract.artifacts import unpushed_work
from agentjobs.contract.text import agent_text, substance
from agentjobs.models.contract import Artifact, KeptAs, PhaseStatus
from agentjobs.models.output import EntryKind, OutputEntry
from agentjobs.models.storage import RepositoryRecord

RECOVERED_PATH = "recovered-from-transcript.md"
RECOVERED_MARKER = "[recovered from transcript]"
KEPT_MARKERS: dict[KeptAs, str] = {
    "failed_phase": "(kept from a failed phase)",
    "partial": "(partial)",
}
JUNK_DIRECTORIES = frozenset({"__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class SkippedEntry:
    path: str
    reason: str
    kind: EntryKind = EntryKind.FILE


class ArtifactBranch(Enum):
    """Which branch of the artifact rule applies to a phase."""

    COMPLETING = "completing"  # R28-R33: the phase completes if the rule holds
    FAILED = "failed"  # R34: keep the work of a failed phase
    PARTIAL = "partial"  # R34: keep the work of a cancelled or interrupted phase
    RETRIED = "retried"  # R34: an attempt retried because its terminal event was lost


# R34, R41: how the work of a phase that ended without completing is kept, and labelled.
_KEPT_BRANCHES = {
    PhaseStatus.FAILED: ArtifactBranch.FAILED,
    PhaseStatus.CANCELLED: ArtifactBranch.PARTIAL,
    PhaseStatus.INTERRUPTED: ArtifactBranch.PARTIAL,
}
_KEPT_AS: dict[ArtifactBranch, KeptAs] = {
    ArtifactBranch.FAILED: "failed_phase",
    ArtifactBranch.PARTIAL: "partial",
}


def branch_for(status: PhaseStatus, *, retried: bool) -> ArtifactBranch:
    """The branch of the rule for a phase that ended ``status`` (R28-R34)."""
    if retried:
        return ArtifactBranch.RETRIED
    return _KEPT_BRANCHES.get(status, ArtifactBranch.COMPLETING)


def kept_as(status: PhaseStatus) -> KeptAs | None:
    """R34, R41: the label of the work a phase that ended ``status`` keeps; None: it completed."""
    branch = _KEPT_BRANCHES.get(status)
    return _KEPT_AS[branch] if branch else None


@dataclass(frozen=True)
class ArtifactPlan:
    """The artifact rule's verdict for one phase."""

    artifacts: list[Artifact]
    skipped: list[SkippedEntry] = field(default_factory=list)
    deliverable_recovered: bool = False
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RecoveryContext:
    """What the operator knows when it recovers a last message (R31, R33), and the git
    repositories the harvester found (R52)."""

    phase_name: str
    last_message: str | None
    declared_outputs: Sequence[str] = ()
    work: Sequence[RepositoryRecord] = ()
    # R64: the repositories whose push did not land; a completed phase lists their patches.
    unpushed: frozenset[str] = frozenset()
    stopped_by: str | None = None  # R70: the limit that stopped the agent, in words


def _is_junk(path: str) -> bool:
    return any(part in JUNK_DIRECTORIES for part in path.split("/")[:-1])


def sort_entries(
    entries: Sequence[OutputEntry],
) -> tuple[list[OutputEntry], list[OutputEntry], list[SkippedEntry], list[str]]:
    """R28: split a listing into non-empty files, empty files and skipped entries."""
    files: list[OutputEntry] = []
    empty: list[OutputEntry] = []
    skipped: list[SkippedEntry] = []
    warnings: list[str] = []
    for entry in sorted(entries, key=lambda item: item.path):
        if _is_junk(entry.path):
            skipped.append(SkippedEntry(entry.path, "inside a build-junk directory", entry.kind))
        elif entry.problem is not None:
            skipped.append(SkippedEntry(entry.path, entry.problem, entry.kind))
            warnings.append(f"{entry.path}: {entry.problem}; it is not an artifact")
        elif entry.kind is EntryKind.SYMLINK:
            skipped.append(SkippedEntry(entry.path, "symlink, not followed", entry.kind))
            warnings.append(
                f"{entry.path} is a symlink; it was not followed and is not an artifact"
            )
        elif entry.kind in (EntryKind.SPECIAL, EntryKind.DIRECTORY):
            skipped.append(SkippedEntry(entry.path, "not a regular file", entry.kind))
            warnings.append(f"{entry.path} is not a regular file; it was not read")
        elif entry.size == 0:
            empty.append(entry)
        else:
            files.append(entry)
    return files, empty, skipped, warnings


def recovered_content(context: RecoveryContext) -> str:
    """R31: the banner, the limit that stopped the agent (R70), where the work stands, and
    the agent's last message."""
    parts = [
        f"> **Recovered from the transcript.** This is the last message the agent wrote in "
        f"phase `{context.phase_name}`, taken from its session transcript. It is not a "
        f"deliverable the phase wrote.",
    ]
    if context.stopped_by is not None:
        parts.append(f"> **Stopped by a limit.** {context.stopped_by}.")
    if (work := unpushed_work.work_section(context.work)) is not None:
        parts.append(work)
    parts.append(f"## The agent's last message\n\n{context.last_message or ''}")
    return "\n\n".join(parts) + "\n"


def artifact_title(path: str, *, recovered: bool, kept_as: KeptAs | None) -> str:
    markers = [KEPT_MARKERS[kept_as]] if kept_as else []
    if recovered:
        markers.append(RECOVERED_MARKER)
    return " ".join([path, *markers])


def _file_artifact(entry: OutputEntry, kept_as: KeptAs | None) -> Artifact:
    return Artifact(
        path=entry.path,
        title=artifact_title(entry.path, recovered=False, kept_as=kept_as),
        size=entry.size,
        kept_as=kept_as,
    )


def _recovered_artifact(path: str, context: RecoveryContext, kept_as: KeptAs | None) -> Artifact:
    content = recovered_content(context)
    return Artifact(
        path=path,
        title=artifact_title(path, recovered=True, kept_as=kept_as),
        size=len(content.encode("utf-8")),
        recovered=True,
        kept_as=kept_as,
        content=content,
    )


def nothing_usable_error(context: RecoveryContext, *, empty_paths: Sequence[str]) -> str:
    """R33: the error that fails a phase with nothing usable."""
    if empty_paths:
        count = len(empty_paths)
        files = "an empty file" if count == 1 else f"{count:,} empty files"
        what = f"it wrote {files} ({agent_text.named_and_counted(empty_paths)})"
    else:
        what = "it wrote no file under artifacts/output/"
    message = (
        f"phase {context.phase_name!r} produced nothing usable: {what}, and its last message "
        f"has fewer than {substance.REQUIRED_WORDS} words of substance to recover"
    )
    if context.declared_outputs:
        message += "; it declared outputs: " + agent_text.named_and_counted(
            context.declared_outputs, shown=10
        )
    return message


def plan_artifacts(
    entries: Sequence[OutputEntry], context: RecoveryContext, end: ArtifactBranch
) -> ArtifactPlan:
    """Apply the artifact rule for one way a phase can end."""
    files, empty, skipped, warnings = sort_entries(entries)
    if end is ArtifactBranch.RETRIED:
        return ArtifactPlan([], skipped, warnings=warnings)
    usable_message = substance.has_substance(context.last_message)
    if end is ArtifactBranch.COMPLETING:
        artifacts = [_file_artifact(entry, None) for entry in files]
        if files and not empty:
            plan = ArtifactPlan(artifacts, skipped, warnings=warnings)
            return _with_patches(plan, context, None, only=context.unpushed)
        if not usable_message:
            error = nothing_usable_error(context, empty_paths=[entry.path for entry in empty])
            return ArtifactPlan([], skipped, error=error, warnings=warnings)
        recovered_paths = [entry.path for entry in empty] or [RECOVERED_PATH]
        artifacts += [_recovered_artifact(path, context, None) for path in recovered_paths]
        artifacts.sort(key=lambda artifact: artifact.path)
        plan = ArtifactPlan(artifacts, skipped, deliverable_recovered=True, warnings=warnings)
        return _with_patches(plan, context, None, only=context.unpushed)
    kept_as = _KEPT_AS[end]
    if files:
        kept = [_file_artifact(e, kept_as) for e in files]
        return _with_patches(ArtifactPlan(kept, skipped, warnings=warnings), context, kept_as)
    if usable_message:
        recovered = _recovered_artifact(RECOVERED_PATH, context, kept_as)
        plan = ArtifactPlan([recovered], skipped, deliverable_recovered=True, warnings=warnings)
        return _with_patches(plan, context, kept_as)
    return _with_patches(ArtifactPlan([], skipped, warnings=warnings), context, kept_as)


def _with_patches(
    plan: ArtifactPlan,
    context: RecoveryContext,
    kept_as: KeptAs | None,
    *,
    only: frozenset[str] | None = None,
) -> ArtifactPlan:
    """R52: the kept work's patches among the artifacts (``only``: of those repositories),
    unless an output file has the path."""
    taken = {artifact.path for artifact in plan.artifacts}
    artifacts = list(plan.artifacts)
    warnings = list(plan.warnings)
    records = [r for r in context.work if only is None or r.repo in only]
    for path, patch in unpushed_work.stored_patches(records):
        if path in taken:
            warnings.append(f"{path}: an output file has this path; the patch is not listed")
            continue
        title = artifact_title(path, recovered=False, kept_as=kept_as)
        artifacts.append(Artifact(path=path, title=title, size=patch.size, kept_as=kept_as))
    artifacts.sort(key=lambda artifact: artifact.path)
    return ArtifactPlan(artifacts, plan.skipped, plan.deliverable_recovered, plan.error, warnings)
