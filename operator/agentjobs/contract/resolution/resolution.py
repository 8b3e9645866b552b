"""R14-R22a: a phase's status and failure classification from its report and run facts.

The artifact rule (R28-R33) is decided elsewhere; this table only needs to
know whether it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjobs.models.contract import (
    FailureClassification,
    FailureKind,
    FailureReason,
    PhaseStatus,
    Report,
    ReportState,
    SystemFailure,
)


@dataclass(frozen=True)
class RunFacts:
    """What the platform observed about one run of an agent container (R14, R15).

    ``exit_code`` is None when the container never reached an exit of its
    own; like a deadline, an eviction, an OOM kill or a node loss (R15) that
    counts as a non-zero exit. ``system_failure`` says why the run ended
    abnormally, when the platform knows. ``agent_cli_error`` is the agent
    CLI's own verdict that its run failed (R13e), classified: it too counts
    as a non-zero exit, whatever the container's exit code.
    """

    exit_code: int | None
    stream_intact: bool
    cancelled: bool = False
    interrupted: bool = False
    system_failure: SystemFailure | None = None
    agent_cli_error: SystemFailure | None = None

    @property
    def exited_cleanly(self) -> bool:
        return self.exit_code == 0 and self.system_failure is None and self.agent_cli_error is None


@dataclass(frozen=True)
class RunResolution:
    """A phase's status, the platform's classification and, for a system-decided end, why."""

    status: PhaseStatus
    failure_classification: FailureClassification | None
    reported_failure_reason: FailureReason | None
    cause: SystemFailure | None


def stream_intact(
    *,
    read_from_first_byte: bool,
    read_to_end_after_exit: bool,
    resumed_without_gap: bool,
    needs_terminal_event: bool,
    terminal_event_seen: bool,
) -> bool:
    """R14: the log was read whole, from its first byte to its end after the container
    terminated, with no reconnect that could not prove where it resumed; a ``jsonl``
    transcript also needs the agent's terminal event."""
    whole = read_from_first_byte and read_to_end_after_exit and resumed_without_gap
    return whole and (terminal_event_seen or not needs_terminal_event)


def resolve_run(report: Report, run: RunFacts, *, artifact_rule_holds: bool) -> RunResolution:
    """Apply the phase-resolution table (R16-R22a) to one report and one run."""
    reason = report.failure_reason
    if run.cancelled:  # R22
        return RunResolution(PhaseStatus.CANCELLED, None, reason, None)
    if run.interrupted:  # R22a
        cause = run.system_failure or SystemFailure(
            kind=FailureKind.TRANSIENT,
            code="interrupted",
            message="the run was interrupted before the agent container terminated",
        )
        return RunResolution(PhaseStatus.INTERRUPTED, None, reason, cause)
    if not run.exited_cleanly:  # R21; what the pod says outweighs the CLI, then its exit code
        cause = run.system_failure or run.agent_cli_error or _exit_failure(run.exit_code)
        return _failed(reason, cause)
    state = report.state
    if state in (ReportState.SUCCESS, ReportState.NOT_REPORTED):  # R16, R19
        if artifact_rule_holds:
            return RunResolution(PhaseStatus.COMPLETED, None, reason, None)
        return _failed(reason, None)  # the artifact rule supplies the cause (R33)
    if not run.stream_intact:  # R20
        return _failed(
            reason,
            SystemFailure(
                kind=FailureKind.STREAM_BROKEN,
                code="stream_broken",
                message="the agent's log could not be read whole, so its report cannot be trusted",
            ),
        )
    if state is ReportState.UNREADABLE:  # R18
        detail = report.warnings[0] if report.warnings else "unreadable report"
        return _failed(
            reason,
            SystemFailure(
                kind=FailureKind.UNREADABLE_REPORT, code="unreadable_report", message=detail
            ),
        )
    # R17: a clean run with a readable failure is the system working as designed.
    classification = (
        FailureClassification.UNCLASSIFIED
        if reason is FailureReason.UNKNOWN
        else FailureClassification.CORRECT_REFUSAL
    )
    return RunResolution(PhaseStatus.FAILED, classification, reason, None)


def _failed(reason: FailureReason | None, cause: SystemFailure | None) -> RunResolution:
    return RunResolution(PhaseStatus.FAILED, FailureClassification.PLATFORM, reason, cause)


def _exit_failure(exit_code: int | None) -> SystemFailure:
    if exit_code is None:
        return SystemFailure(
            kind=FailureKind.CRASH, code="no_exit", message="the agent container did not exit"
        )
    return SystemFailure(
        kind=FailureKind.CRASH,
        code=f"exit_code_{exit_code}",
        message=f"the agent container exited with code {exit_code}",
    )
