"""The Phase statuses the phase core builds as a run goes on: checkpoints and attempt records.

Cases: the log's progress never goes back (a restarted reader that is behind keeps the bytes
already proven, and reports are never counted twice), the run's checkpoint replaces only
``run``, and an attempt that is not retried is recorded once, however often it is written.
"""

from __future__ import annotations

from datetime import UTC, datetime

from agentjobs.contract.phase import phase_status
from agentjobs.contract.repositories.git_errors import GitFailure, GitFault
from agentjobs.contract.repositories.push import UnpushedWork
from agentjobs.models.contract import (
    PhaseStatus,
    Report,
    ReportState,
    TaskOutcome,
    TaskOutcomeSource,
    TaskOutcomeStatus,
)
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import LogProgress, PhaseResourceStatus, RunCheckpoint
from agentjobs.models.retry import AttemptRecord

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def running(log: LogProgress | None = None) -> PhaseResourceStatus:
    return PhaseResourceStatus(status=PhaseStatus.RUNNING, attempt=1, pod_name="p-a1", log=log)


def test_the_first_progress_is_written_as_read() -> None:
    status = phase_status.with_log_progress(running(), bytes_read=10, sha256="aa")
    assert status.log == LogProgress(bytes_read=10, sha256="aa")
    assert status.pod_name == "p-a1" and status.status is PhaseStatus.RUNNING


def test_progress_moves_forward() -> None:
    known = LogProgress(bytes_read=10, sha256="aa")
    status = phase_status.with_log_progress(running(known), bytes_read=25, sha256="bb")
    assert status.log == LogProgress(bytes_read=25, sha256="bb")


def test_a_reader_behind_the_checkpoint_keeps_the_bytes_already_proven() -> None:
    known = LogProgress(bytes_read=40, sha256="cc")
    status = phase_status.with_log_progress(running(known), bytes_read=12, sha256="dd")
    assert status.log == known


def test_the_run_checkpoint_replaces_only_the_run() -> None:
    before = running(LogProgress(bytes_read=5, sha256="aa"))
    record = RunCheckpoint(
        exit_code=0,
        stream_intact=True,
        report=Report(state=ReportState.SUCCESS),
        transcript_bytes=5,
        transcript_sha256="aa",
    )
    status = phase_status.with_run(before, record)
    assert status.run == record
    assert status.model_copy(update={"run": None}) == before


def test_an_attempt_not_retried_is_recorded_once_however_often_it_is_written() -> None:
    record = AttemptRecord(number=1, status=PhaseStatus.FAILED, pod_name="p-a1", finished_at=NOW)
    concluded = running().model_copy(update={"status": PhaseStatus.FAILED})
    once = phase_status.not_retried(concluded, record)
    twice = phase_status.not_retried(once, record)
    assert once.attempts == twice.attempts == [record]
    assert once.status is PhaseStatus.FAILED


def test_r64_a_push_that_did_not_land_keeps_the_status_and_makes_the_success_partial() -> None:
    success = TaskOutcome(
        status=TaskOutcomeStatus.SUCCESS,
        source=TaskOutcomeSource.AGENT,
        summary="Done.",
        terminal_reason="finish_action",
        reported_at=datetime(2026, 12, 4, tzinfo=UTC),
    )
    finished = PhaseResourceStatus(status=PhaseStatus.COMPLETED, task_outcome=success)
    entry = RepositoryStatus(name="service", url="https://g/s.git", pushed=False)
    refused = UnpushedWork("service", "main", GitFailure(GitFault.PERMISSION, "GH006: no"))
    told = phase_status.with_repositories(finished, [entry], [refused])
    assert (told.status, told.repositories) == (PhaseStatus.COMPLETED, [entry])
    assert told.task_outcome is not None
    assert told.task_outcome.status is TaskOutcomeStatus.PARTIAL_SUCCESS
    assert [b.type for b in told.task_outcome.blockers] == ["permission"]
    landed = phase_status.with_repositories(finished, [entry], [])
    assert landed.task_outcome == success
