"""Checkpointed run facts, owner checks and status patches: what lets a restart finish
a phase without re-reading its log, never adopt another owner's object, and write
nothing when nothing changed; a phase whose harvester never finished cannot complete, and
one whose harvester gave its last sync up says why, short and printable.
"""

from __future__ import annotations

from datetime import UTC, datetime

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import run_checkpoint
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.kube import ownership, status_patch
from agentjobs.models.contract import FailureKind, Report, ReportState, SystemFailure
from agentjobs.models.output import EntryKind, OutputEntry
from agentjobs.models.resource_status import PhaseResourceStatus

NOW = datetime(2026, 12, 1, 10, tzinfo=UTC)
REPORT = Report(state=ReportState.FAILURE, success=False, comments="no access")


def test_a_checkpoint_restores_exactly_the_facts_it_recorded() -> None:
    failure = SystemFailure(kind=FailureKind.TIMEOUT, code="DeadlineExceeded", message="late")
    run = RunFacts(exit_code=137, stream_intact=False, interrupted=True, system_failure=failure)
    verdict = ReaderVerdict(REPORT, "the last words of the agent", True)
    record = run_checkpoint.record(run, verdict, transcript_bytes=12, transcript_sha256="ab")
    dumped = record.model_dump(mode="json", by_alias=True)
    assert dumped["transcriptBytes"] == 12 and dumped["systemFailure"]["code"] == "DeadlineExceeded"
    restored = PhaseResourceStatus.model_validate({"run": dumped}).run
    assert restored is not None
    assert run_checkpoint.restore(restored) == (run, verdict)


def test_a_run_that_never_started_is_checkpointed_as_not_reported() -> None:
    run = RunFacts(exit_code=None, stream_intact=False, cancelled=True)
    record = run_checkpoint.record(run, None, transcript_bytes=0, transcript_sha256="")
    assert run_checkpoint.restore(record)[1].report.state is ReportState.NOT_REPORTED


def owned(uid: str, *, controller: bool = True) -> dict[str, object]:
    reference = {"kind": "Phase", "name": "p", "uid": uid, "controller": controller}
    return {"kind": "Pod", "metadata": {"name": "p-a1", "ownerReferences": [reference]}}


def test_only_the_controlling_owners_uid_makes_an_object_a_child() -> None:
    assert ownership.owned_by(owned("new"), "new")
    assert not ownership.owned_by(owned("old"), "new")
    assert not ownership.owned_by(owned("new", controller=False), "new")
    assert not ownership.owned_by({"metadata": {"name": "x"}}, "new")
    message = ownership.describe_foreign(owned("old"))
    assert "Pod 'p-a1' belongs to Phase p (uid old)" in message


def test_an_unchanged_status_gives_no_patch_and_a_removed_field_is_nulled() -> None:
    before = PhaseResourceStatus.model_validate({"status": "running", "podName": "p-a1"})
    assert status_patch.status_patch(before, before) is None
    after = PhaseResourceStatus.model_validate({"status": "running"})
    patch = status_patch.status_patch(after, before)
    assert patch is not None and (patch["status"], patch["podName"]) == ("running", None)


def test_a_phase_whose_harvester_never_finished_cannot_complete() -> None:
    files = [OutputEntry(path="notes.md", kind=EntryKind.FILE, size=40)]
    recovery = RecoveryContext(phase_name="draft", last_message=None, declared_outputs=())
    success = Report(state=ReportState.SUCCESS, success=True)
    clean = RunFacts(exit_code=0, stream_intact=True)
    done = phase.resolve_phase(report=success, run=clean, output=files, recovery=recovery, now=NOW)
    assert done.status == "completed"
    partial = phase.resolve_phase(
        report=success,
        run=clean,
        output=files,
        recovery=recovery,
        now=NOW,
        artifacts_complete=False,
    )
    assert (partial.status, partial.failure_classification) == ("failed", "platform")
    assert partial.error == phase.INCOMPLETE_ARTIFACTS
    assert partial.artifacts is not None
    assert [a.kept_as for a in partial.artifacts.artifacts] == ["failed_phase"]
    assert partial.task_outcome.terminal_reason == "ArtifactsIncomplete"


def test_a_harvester_that_gave_up_says_why_in_the_phases_error() -> None:
    files = [OutputEntry(path="notes.md", kind=EntryKind.FILE, size=40)]
    recovery = RecoveryContext(phase_name="draft", last_message=None, declared_outputs=())
    success = Report(state=ReportState.SUCCESS, success=True)
    partial = phase.resolve_phase(
        report=success,
        run=RunFacts(exit_code=0, stream_intact=True),
        output=files,
        recovery=recovery,
        now=NOW,
        artifacts_complete=False,
        harvest_failure="the sync was refused: HTTP 413\x1b[2J" + "x" * 10_000,
    )
    assert partial.status == "failed"
    assert partial.error is not None
    assert partial.error.startswith("the harvester gave its last sync up (the sync was refused")
    assert "HTTP 413?[2J" in partial.error and len(partial.error) < 500
    assert partial.task_outcome.terminal_reason == "ArtifactsIncomplete"


def test_a_field_gone_from_a_nested_object_is_nulled_in_the_patch() -> None:
    record = {"stream_intact": True, "transcript_bytes": 1, "transcript_sha256": "ab"}
    report = {"state": "success"}
    before = PhaseResourceStatus.model_validate(
        {"run": {**record, "report": report, "last_message": "the agent's last words"}}
    )
    after = PhaseResourceStatus.model_validate({"run": {**record, "report": report}})
    patch = status_patch.status_patch(after, before)
    assert patch is not None and patch["run"]["lastMessage"] is None
    assert patch["run"]["report"] == {"state": "success", "warnings": []}
