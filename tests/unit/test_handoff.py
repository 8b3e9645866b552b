"""The hand-off by manifest (R35, issue 15): what the next phase is given and may read.

Cases: the manifest lists every stored artifact (recovered ones too) in path
order and nothing unstored; a checked manifest maps each artifact to its
object and its path under input/; an entry with `..`, an absolute path, a
key outside the handed-on output/, another bucket, a bad SHA-256, or a path
that is both a file and a directory refuses the whole manifest; a reference
that is not an artifacts.json is refused; the Phase's status lists at most
100 artifacts and 100 warnings with their counts, and stays far below the
API server's limit with the longest paths.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePosixPath

import pytest

from agentjobs.contract.artifacts import artifact_rule, handoff
from agentjobs.contract.outcome import phase, status_budget
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.models.contract import Artifact, PhaseStatus, Report, ReportState
from agentjobs.models.output import MAX_PATH_BYTES
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.storage import HandoffManifest, HandoffRef, InputArtifact

ROOT = "ns/run/0-draft/attempt-1"
REF = HandoffRef(manifest=f"s3://b/{ROOT}/artifacts.json", sha256="ab" * 32, count=2)


def item(
    path: str, key: str | None = None, bucket: str = "b", sha256: str = "cd" * 32
) -> InputArtifact:
    key = key if key is not None else f"{ROOT}/output/{path}"
    return InputArtifact(path=path, url=f"s3://{bucket}/{key}", sha256=sha256, size=1)


def test_r35_the_manifest_lists_every_stored_artifact_in_path_order() -> None:
    artifacts = [
        Artifact(path="b.md", title="b.md", size=2),
        Artifact(path="a.md", title="a.md", size=1, recovered=True),
        Artifact(path="unstored.md", title="unstored.md", size=3),
    ]
    stored = {"a.md": ("s3://b/k/a.md", "11" * 32), "b.md": ("s3://b/k/b.md", "22" * 32)}
    manifest = handoff.handoff_manifest(artifacts, stored)
    assert [(a.path, a.url, a.size) for a in manifest.artifacts] == [
        ("a.md", "s3://b/k/a.md", 1),
        ("b.md", "s3://b/k/b.md", 2),
    ]


def test_r35_a_checked_manifest_maps_each_object_to_its_input_path() -> None:
    manifest = HandoffManifest(artifacts=[item("plan.md"), item("src/deep/x.py")])
    [first, second] = handoff.downloads(manifest, REF)
    assert (first.location.key, first.path) == (f"{ROOT}/output/plan.md", PurePosixPath("plan.md"))
    assert second.path.parts == ("src", "deep", "x.py")


@pytest.mark.parametrize(
    "entry",
    [
        item("../escape.md"),
        item("a/../../escape.md", key=f"{ROOT}/output/x"),
        item("/etc/passwd", key=f"{ROOT}/output/x"),
        item("x.md", key=f"{ROOT}/output/../../../team-b/secret.md"),
        item("x.md", key=f"{ROOT}/transcript.log"),
        item("x.md", key="ns/run/1-other/attempt-1/output/x.md"),
        item("x.md", bucket="other"),
        item("x.md", sha256="not-a-hash"),
        item("x" * (MAX_PATH_BYTES + 1)),
    ],
)
def test_r35_one_unsafe_entry_refuses_the_whole_manifest(entry: InputArtifact) -> None:
    manifest = HandoffManifest(artifacts=[item("fine.md"), entry])
    with pytest.raises(handoff.UnsafeArtifactPath):
        handoff.downloads(manifest, REF)


def test_r35_a_path_that_is_both_a_file_and_a_directory_is_refused() -> None:
    for paths in (["a", "a/b"], ["a/b", "a"], ["a", "a"]):
        manifest = HandoffManifest(artifacts=[item(path) for path in paths])
        with pytest.raises(handoff.UnsafeArtifactPath, match="twice or inside a file"):
            handoff.downloads(manifest, REF)


def test_r35_a_reference_to_anything_but_an_artifacts_json_is_refused() -> None:
    for url in (
        f"s3://b/{ROOT}/manifest.json",
        "s3://b/artifacts.json",
        "https://x/artifacts.json",
    ):
        with pytest.raises(handoff.UnsafeArtifactPath):
            handoff.handed_on_root(REF.model_copy(update={"manifest": url}))


NOW = datetime(2026, 1, 1, tzinfo=UTC)


def finished(artifacts: int, skipped: int, path_bytes: int = 20) -> PhaseResourceStatus:
    plan = artifact_rule.ArtifactPlan(
        artifacts=[
            Artifact(path=f"{index:05}".ljust(path_bytes, "x"), title="t", size=1)
            for index in range(artifacts)
        ],
        skipped=[
            artifact_rule.SkippedEntry(f"s{index}", "a FIFO (named pipe); not read")
            for index in range(skipped)
        ],
        warnings=[f"s{index}".ljust(path_bytes * 4, "\\") for index in range(skipped)],
    )
    result = phase.PhaseResult(
        status=PhaseStatus.COMPLETED,
        failure_classification=None,
        reported_failure_reason=None,
        task_outcome=phase.outcome.for_phase(
            status=PhaseStatus.COMPLETED,
            report=Report(state=ReportState.SUCCESS, success=True),
            cause=None,
            now=NOW,
        ),
        artifacts=plan,
        error=None,
    )
    stored = {a.path: ("s3://b/" + "k" * 900, "ab" * 32) for a in plan.artifacts}
    return phase_status.finished(
        PhaseResourceStatus(),
        verdict=ReaderVerdict(
            report=Report(state=ReportState.SUCCESS, success=True),
            last_message=None,
            terminal_event_seen=True,
        ),
        run=RunFacts(exit_code=0, stream_intact=True),
        result=result,
        stored=stored,
        generation=1,
        now=NOW,
        handoff=REF,
    )


def test_the_status_lists_at_most_100_artifacts_and_warnings_with_their_counts() -> None:
    status = finished(artifacts=250, skipped=300)
    assert len(status.artifacts) == status_budget.ARTIFACTS_LISTED == 100
    assert status.artifacts[0].path.startswith("00000")
    assert (status.artifact_count, status.skipped_count) == (250, 300)
    assert len(status.artifact_warnings) == 100
    assert status.handoff == REF
    small = finished(artifacts=2, skipped=1)
    assert (len(small.artifacts), small.artifact_count, len(small.artifact_warnings)) == (2, 2, 1)


def test_the_status_stays_far_below_the_api_servers_limit_with_the_longest_paths() -> None:
    status = finished(artifacts=10_000, skipped=90_000, path_bytes=MAX_PATH_BYTES)
    size = len(status.model_dump_json(by_alias=True, exclude_none=True))
    assert size < 512 * 1024, size  # the API server takes 1.5 MiB per object
