"""The CLI's own verdict and usage as run facts, through to the Phase and Execution (R13e,
R13f, R21, R36).

Cases: a CLI error fails a run that exited 0 (R21, `platform`) with the
CLI's classification as the cause; the pod's own failure outweighs it, and
it outweighs a bare exit code; a cancelled or interrupted run stays so; the
checkpoint keeps the CLI error and the usage across a restart; a finished
Phase's status carries the usage; the Execution sums its own phases' usage
and leaves out inherited ones; usage sums field by field, None staying
"not reported".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.execution import execution
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import phase_status, run_checkpoint
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.resolution.resolution import RunFacts, resolve_run
from agentjobs.contract.text import usage
from agentjobs.models.contract import (
    FailureClassification,
    FailureKind,
    PhaseStatus,
    Report,
    ReportState,
    SystemFailure,
    TaskOutcomeStatus,
    Usage,
)
from agentjobs.models.resource_status import PhaseResourceStatus
from tests.unit.test_execution_plan import COMPLETED, child, plan

NOW = datetime(2026, 12, 1, 10, tzinfo=UTC)
SUCCESS = Report(state=ReportState.SUCCESS, success=True, comments="done")
AUTH = SystemFailure(kind=FailureKind.AUTH, code="agent_cli_error", message="Not signed in")
OOM = SystemFailure(kind=FailureKind.OUT_OF_MEMORY, code="OOMKilled", message="killed")
USAGE = Usage(input_tokens=10, output_tokens=2, cost_usd=0.5)


def test_r13e_a_cli_error_fails_a_run_that_exited_0_with_its_classification() -> None:
    run = RunFacts(exit_code=0, stream_intact=True, agent_cli_error=AUTH)
    resolved = resolve_run(SUCCESS, run, artifact_rule_holds=True)
    assert (resolved.status, resolved.failure_classification, resolved.cause) == (
        PhaseStatus.FAILED,
        FailureClassification.PLATFORM,
        AUTH,
    )


def test_r13e_the_pods_failure_outweighs_the_cli_error_which_outweighs_the_exit_code() -> None:
    both = RunFacts(exit_code=1, stream_intact=True, system_failure=OOM, agent_cli_error=AUTH)
    assert resolve_run(SUCCESS, both, artifact_rule_holds=True).cause == OOM
    cli_only = RunFacts(exit_code=1, stream_intact=True, agent_cli_error=AUTH)
    assert resolve_run(SUCCESS, cli_only, artifact_rule_holds=True).cause == AUTH


def test_r22_a_cancelled_or_interrupted_run_stays_so_with_a_cli_error() -> None:
    cancelled = RunFacts(exit_code=0, stream_intact=True, cancelled=True, agent_cli_error=AUTH)
    assert resolve_run(SUCCESS, cancelled, artifact_rule_holds=True).status is (
        PhaseStatus.CANCELLED
    )
    cut = RunFacts(exit_code=None, stream_intact=False, interrupted=True, agent_cli_error=AUTH)
    assert resolve_run(SUCCESS, cut, artifact_rule_holds=True).status is PhaseStatus.INTERRUPTED


def test_r13e_r36_the_phase_outcome_is_blocked_by_the_clis_auth_error() -> None:
    result = phase.resolve_phase(
        report=Report(state=ReportState.NOT_REPORTED),
        run=RunFacts(exit_code=0, stream_intact=True, agent_cli_error=AUTH),
        output=None,
        recovery=RecoveryContext(phase_name="p", last_message=None),
        now=NOW,
    )
    outcome = result.task_outcome
    assert (outcome.status, outcome.terminal_reason, outcome.needs_user_action) == (
        TaskOutcomeStatus.BLOCKED,
        "agent_cli_error",
        True,
    )
    assert outcome.blockers[0].message == "Not signed in"


def test_r13e_r13f_the_checkpoint_keeps_the_cli_error_and_the_usage() -> None:
    run = RunFacts(exit_code=0, stream_intact=True, agent_cli_error=AUTH)
    verdict = ReaderVerdict(SUCCESS, "last words", True, AUTH, USAGE)
    record = run_checkpoint.record(run, verdict, transcript_bytes=5, transcript_sha256="ab")
    dumped = record.model_dump(mode="json", by_alias=True)
    assert dumped["usage"]["costUsd"] == 0.5
    assert dumped["agentCliError"]["kind"] == "auth"
    restored = PhaseResourceStatus.model_validate({"run": dumped}).run
    assert restored is not None
    assert run_checkpoint.restore(restored) == (run, verdict)


def test_r13f_a_finished_phases_status_carries_its_usage() -> None:
    run = RunFacts(exit_code=0, stream_intact=True)
    verdict = ReaderVerdict(SUCCESS, None, True, None, USAGE)
    result = phase.resolve_phase(
        report=SUCCESS,
        run=run,
        output=None,
        recovery=RecoveryContext(phase_name="p", last_message=None),
        now=NOW,
    )
    status = phase_status.finished(
        PhaseResourceStatus(),
        verdict=verdict,
        run=run,
        result=result,
        stored={},
        generation=1,
        now=NOW,
    )
    dumped: dict[str, Any] = status.model_dump(mode="json", by_alias=True)
    assert dumped["usage"] == {
        "inputTokens": 10,
        "outputTokens": 2,
        "cacheCreationInputTokens": None,
        "cacheReadInputTokens": None,
        "costUsd": 0.5,
        "turns": None,
    }


def test_r13f_r27_the_execution_sums_its_own_phases_usage_only() -> None:
    phases = [
        execution.PhaseRecord("a", PhaseStatus.COMPLETED, usage=USAGE, inherited=True),
        execution.PhaseRecord("b", PhaseStatus.COMPLETED, usage=USAGE),
        execution.PhaseRecord("c", PhaseStatus.FAILED, usage=Usage(input_tokens=5)),
        execution.PhaseRecord("d", PhaseStatus.COMPLETED),
    ]
    summary = execution.summarize(phases, phase_count=4)
    assert summary.usage == Usage(input_tokens=15, output_tokens=2, cost_usd=0.5)


def test_r13f_usage_sums_field_by_field_and_none_stays_not_reported() -> None:
    assert usage.total([]) is None
    assert usage.total([None, None]) is None
    summed = usage.total([Usage(input_tokens=1), Usage(cache_read_input_tokens=4, cost_usd=0.25)])
    assert summed == Usage(input_tokens=1, cache_read_input_tokens=4, cost_usd=0.25)


def test_r13f_the_execution_status_carries_the_summed_usage() -> None:
    usage_json = {"inputTokens": 7, "costUsd": 0.25}
    planned = plan([child(0, {**COMPLETED, "usage": usage_json}), child(1, {**COMPLETED})])
    assert planned.status.usage == Usage(input_tokens=7, cost_usd=0.25)
