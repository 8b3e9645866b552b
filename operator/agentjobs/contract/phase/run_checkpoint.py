"""The run's facts as the Phase's status records them once the log is judged, and back.

Written before any artifact is collected, so that a restarted operator finishes
the phase from the record (the pod may be gone by then) and never reads a log
it has already judged.
"""

from __future__ import annotations

from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.models.contract import Report, ReportState
from agentjobs.models.resource_status import RunCheckpoint


def record(
    run: RunFacts,
    verdict: ReaderVerdict | None,
    *,
    transcript_bytes: int,
    transcript_sha256: str,
    transcript_truncated: bool = False,
) -> RunCheckpoint:
    verdict = verdict or ReaderVerdict(Report(state=ReportState.NOT_REPORTED), None, False)
    return RunCheckpoint(
        exit_code=run.exit_code,
        stream_intact=run.stream_intact,
        cancelled=run.cancelled,
        interrupted=run.interrupted,
        system_failure=run.system_failure,
        agent_cli_error=run.agent_cli_error,
        report=verdict.report,
        last_message=verdict.last_message,
        terminal_event_seen=verdict.terminal_event_seen,
        usage=verdict.usage,
        transcript_bytes=transcript_bytes,
        transcript_sha256=transcript_sha256,
        transcript_truncated=transcript_truncated,
    )


def restore(checkpoint: RunCheckpoint) -> tuple[RunFacts, ReaderVerdict]:
    run = RunFacts(
        exit_code=checkpoint.exit_code,
        stream_intact=checkpoint.stream_intact,
        cancelled=checkpoint.cancelled,
        interrupted=checkpoint.interrupted,
        system_failure=checkpoint.system_failure,
        agent_cli_error=checkpoint.agent_cli_error,
    )
    verdict = ReaderVerdict(
        checkpoint.report,
        checkpoint.last_message,
        checkpoint.terminal_event_seen,
        checkpoint.agent_cli_error,
        checkpoint.usage,
    )
    return run, verdict
