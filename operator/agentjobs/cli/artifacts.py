"""`agentjobs artifacts NAMESPACE/EXECUTION`: list or download an execution's artifacts."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.cli import execution_phases
from agentjobs.contract.artifacts import handoff
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.storage import HandoffManifest, InputArtifact, ObjectLocation

HELP = "list or download an execution's artifacts"
DESCRIPTION = (
    "List the artifacts of an Execution's phases (from their status: the first 100 of each), "
    "or download every one with --download (from each phase's artifacts.json), verifying "
    "each SHA-256. Downloads use the AGENTJOBS_S3_* settings."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("execution", metavar="NAMESPACE/EXECUTION")
    parser.add_argument("--phase", metavar="NAME", help="only this phase's artifacts")
    parser.add_argument(
        "--download", type=Path, metavar="DIR", help="download into DIR/<index>-<phase>/<path>"
    )


PhaseArtifacts = execution_phases.PhaseRecord


def _print(phases: list[PhaseArtifacts]) -> None:
    rows = [("PHASE", "SIZE", "SHA256", "TITLE", "URL")]
    for spec, status in phases:
        for artifact in status.artifacts:
            rows.append(
                (
                    spec.name,
                    str(artifact.size),
                    (artifact.sha256 or "-")[:12],
                    artifact.title,
                    artifact.url or "-",
                )
            )
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
            + "  "
            + row[4]
        )


def _stored(store: ObjectStore, status: PhaseResourceStatus) -> list[InputArtifact]:
    """Every stored artifact of a phase: its hand-off manifest, checked, or else its status;
    and the listed ones that are not handed on (R52's patches of unpushed work)."""
    listed = [
        InputArtifact(path=a.path, url=a.url, sha256=a.sha256, size=a.size)
        for a in status.artifacts
        if a.url is not None and a.sha256 is not None
    ]
    if status.handoff is None:
        return listed
    data = store.get_bytes(ObjectLocation.parse(status.handoff.manifest)) or b""
    if hashlib.sha256(data).hexdigest() != status.handoff.sha256:
        raise ValueError(f"{status.handoff.manifest} is missing or not the one the status names")
    handed_on = HandoffManifest.model_validate_json(data).artifacts
    paths = {artifact.path for artifact in handed_on}
    return handed_on + [artifact for artifact in listed if artifact.path not in paths]


def _download(phases: list[PhaseArtifacts], directory: Path) -> int:
    store = ObjectStore(StorageSettings.from_environment())
    count = 0
    for spec, status in phases:
        for artifact in _stored(store, status):
            target = (
                directory
                / f"{spec.index}-{spec.name}"
                / handoff.relative_artifact_path(artifact.path)
            )
            target.parent.mkdir(parents=True, exist_ok=True)
            store.download(ObjectLocation.parse(artifact.url), target, sha256=artifact.sha256)
            print(f"{target}  ({artifact.size} bytes, sha256 verified)")
            count += 1
    return count


def run(args: argparse.Namespace) -> int:
    def act(phases: list[PhaseArtifacts]) -> None:
        if args.download is None:
            _print(phases)
        else:
            _download(phases, args.download)

    return execution_phases.run_on_phases(args.execution, args.phase, act)
