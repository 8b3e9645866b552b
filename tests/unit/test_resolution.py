"""Phase resolution from report state and run facts (R14-R22a), tested exhaustively.

Cases: R14's stream-intact rule; R15's abnormal ends counting as non-zero
exits; every combination of run (clean and intact, clean and broken,
non-zero exit or abnormal end, cancelled, interrupted), report state,
failure_reason and artifact-rule verdict against the table of R16-R22a;
`reported_failure_reason` quoted verbatim and never moving the
classification.
"""

from __future__ import annotations

import itertools

import pytest

from agentjobs.contract.resolution import resolution
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.models.contract import (
    FailureClassification,
    FailureKind,
    FailureReason,
    PhaseStatus,
    Report,
    ReportState,
    SystemFailure,
)

COMPLETED, FAILED = PhaseStatus.COMPLETED, PhaseStatus.FAILED
CANCELLED, INTERRUPTED = PhaseStatus.CANCELLED, PhaseStatus.INTERRUPTED
PLATFORM = FailureClassification.PLATFORM
REFUSAL = FailureClassification.CORRECT_REFUSAL
UNCLASSIFIED = FailureClassification.UNCLASSIFIED

OOM = SystemFailure(kind=FailureKind.OUT_OF_MEMORY, code="OOMKilled", message="OOM")
DEADLINE = SystemFailure(kind=FailureKind.TIMEOUT, code="DeadlineExceeded", message="deadline")
EVICTED = SystemFailure(kind=FailureKind.TRANSIENT, code="Evicted", message="evicted")

# Run facts, grouped by the row of the table they belong to.
RUNS: dict[str, list[RunFacts]] = {
    "clean-intact": [RunFacts(exit_code=0, stream_intact=True)],
    "clean-broken": [RunFacts(exit_code=0, stream_intact=False)],
    "abnormal": [  # R21, with R15's abnormal ends
        RunFacts(exit_code=1, stream_intact=True),
        RunFacts(exit_code=2, stream_intact=False),
        RunFacts(exit_code=137, stream_intact=True, system_failure=OOM),
        RunFacts(exit_code=None, stream_intact=True, system_failure=DEADLINE),
        RunFacts(exit_code=0, stream_intact=True, system_failure=EVICTED),
        RunFacts(exit_code=None, stream_intact=False),
    ],
    "cancelled": [
        RunFacts(exit_code=0, stream_intact=True, cancelled=True),
        RunFacts(exit_code=143, stream_intact=False, cancelled=True),
        RunFacts(exit_code=None, stream_intact=True, cancelled=True, interrupted=True),
    ],
    "interrupted": [
        RunFacts(exit_code=None, stream_intact=False, interrupted=True),
        RunFacts(exit_code=0, stream_intact=True, interrupted=True),
    ],
}

REPORTS: dict[str, list[Report]] = {
    "success": [Report(state=ReportState.SUCCESS, success=True)],
    "not_reported": [Report(state=ReportState.NOT_REPORTED)],
    "unreadable": [Report(state=ReportState.UNREADABLE, warnings=["unreadable report: x"])],
    "failure": [
        Report(state=ReportState.FAILURE, success=False, failure_reason=reason)
        for reason in [*FailureReason, None]
    ],
}

# The table of R16-R22a: (run, report, artifact rule holds) -> (status, classification).
# "refusal" stands for correct_refusal, or unclassified when failure_reason is unknown (R17).
TABLE: dict[tuple[str, str, bool], tuple[PhaseStatus, object]] = {}
for holds in (True, False):
    for report_kind in REPORTS:
        TABLE["cancelled", report_kind, holds] = (CANCELLED, None)  # R22
        TABLE["interrupted", report_kind, holds] = (INTERRUPTED, None)  # R22a
        TABLE["abnormal", report_kind, holds] = (FAILED, PLATFORM)  # R21
    for run_kind in ("clean-intact", "clean-broken"):  # R16, R19
        for report_kind in ("success", "not_reported"):
            TABLE[run_kind, report_kind, holds] = (COMPLETED, None) if holds else (FAILED, PLATFORM)
    TABLE["clean-intact", "failure", holds] = (FAILED, "refusal")  # R17
    TABLE["clean-intact", "unreadable", holds] = (FAILED, PLATFORM)  # R18
    TABLE["clean-broken", "failure", holds] = (FAILED, PLATFORM)  # R20
    TABLE["clean-broken", "unreadable", holds] = (FAILED, PLATFORM)  # R20

CASES = [
    (run_kind, run, report_kind, report, holds)
    for (run_kind, runs), (report_kind, reports), holds in itertools.product(
        RUNS.items(), REPORTS.items(), (True, False)
    )
    for run in runs
    for report in reports
]


def test_r16_to_r22a_the_table_covers_every_row() -> None:
    assert len(TABLE) == len(RUNS) * len(REPORTS) * 2


@pytest.mark.parametrize(("run_kind", "run", "report_kind", "report", "holds"), CASES)
def test_r16_to_r22a_every_combination_resolves_as_the_table_says(
    run_kind: str, run: RunFacts, report_kind: str, report: Report, holds: bool
) -> None:
    status, classification = TABLE[run_kind, report_kind, holds]
    if classification == "refusal":
        unknown = report.failure_reason is FailureReason.UNKNOWN
        classification = UNCLASSIFIED if unknown else REFUSAL
    resolved = resolution.resolve_run(report, run, artifact_rule_holds=holds)
    assert (resolved.status, resolved.failure_classification) == (status, classification)
    assert resolved.reported_failure_reason is report.failure_reason


def test_r17_the_agents_word_never_moves_the_classification_to_platform() -> None:
    report = Report(state=ReportState.FAILURE, success=False, failure_reason=FailureReason.PLATFORM)
    resolved = resolution.resolve_run(report, RUNS["clean-intact"][0], artifact_rule_holds=True)
    assert resolved.failure_classification is REFUSAL
    assert resolved.reported_failure_reason is FailureReason.PLATFORM


def test_r18_the_unreadable_reason_is_the_cause() -> None:
    resolved = resolution.resolve_run(
        REPORTS["unreadable"][0], RUNS["clean-intact"][0], artifact_rule_holds=True
    )
    assert resolved.cause is not None
    assert resolved.cause.kind is FailureKind.UNREADABLE_REPORT
    assert resolved.cause.message == "unreadable report: x"


def test_r21_an_exit_code_names_the_cause() -> None:
    resolved = resolution.resolve_run(
        REPORTS["success"][0], RunFacts(exit_code=3, stream_intact=True), artifact_rule_holds=True
    )
    assert resolved.cause is not None
    assert resolved.cause.code == "exit_code_3"


def test_r15_an_oom_kill_keeps_its_own_cause() -> None:
    run = RunFacts(exit_code=137, stream_intact=True, system_failure=OOM)
    resolved = resolution.resolve_run(REPORTS["success"][0], run, artifact_rule_holds=True)
    assert resolved.cause == OOM


# -- R14 stream intact ------------------------------------------------------------

WHOLE = {
    "read_from_first_byte": True,
    "read_to_end_after_exit": True,
    "resumed_without_gap": True,
}


def test_r14_a_log_read_whole_is_intact() -> None:
    assert resolution.stream_intact(**WHOLE, needs_terminal_event=False, terminal_event_seen=False)


@pytest.mark.parametrize("missing", sorted(WHOLE))
def test_r14_any_gap_breaks_the_stream(missing: str) -> None:
    facts = {**WHOLE, missing: False}
    assert not resolution.stream_intact(
        **facts, needs_terminal_event=False, terminal_event_seen=True
    )


def test_r14_a_jsonl_transcript_needs_its_terminal_event() -> None:
    assert not resolution.stream_intact(
        **WHOLE, needs_terminal_event=True, terminal_event_seen=False
    )
    assert resolution.stream_intact(**WHOLE, needs_terminal_event=True, terminal_event_seen=True)
