"""R55: an error the operator did not expect ends the phase failed (platform), once.

Such an error, met while it read a log, judged a run or wrote its status,
comes back the same on every retry: the same log, the same bug, the same
refusal. Retrying read the whole log again for ever, with the pod held by
its finalizer. Instead the phase ends ``failed`` with the error named, and
nothing reads that log again.

Decision where the contract is silent: the phase's retry policy does not
apply (a new attempt would run the agent again only to meet the same error).
"""

from __future__ import annotations

from datetime import datetime

from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.resolution import resolution
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import FailureKind, Report, ReportState, SystemFailure
from agentjobs.models.resource_status import PhaseResourceStatus

CODE = "OperatorError"


def failure(error: BaseException) -> SystemFailure:
    """The error as the phase's cause, cut and cleaned (it may quote the agent's output)."""
    detail = agent_text.clean(f"{type(error).__name__}: {error}")
    return SystemFailure(
        kind=FailureKind.OPERATOR_ERROR,
        code=CODE,
        message=agent_text.cut(
            f"the operator met an unexpected error: {detail}", agent_text.SHORT_TEXT_BYTES
        ),
    )


def failed_status(
    previous: PhaseResourceStatus,
    *,
    phase_name: str,
    error: BaseException,
    generation: int | None,
    now: datetime,
) -> PhaseResourceStatus:
    """The phase ended ``failed`` (platform) by ``error``, built from nothing the run said."""
    run = resolution.RunFacts(exit_code=None, stream_intact=False, system_failure=failure(error))
    report = Report(state=ReportState.NOT_REPORTED)
    result = phase.resolve_phase(
        report=report,
        run=run,
        output=None,
        recovery=RecoveryContext(phase_name=phase_name, last_message=None),
        now=now,
    )
    return phase_status.finished(
        previous,
        verdict=ReaderVerdict(report, None, False),
        run=run,
        result=result,
        stored={},
        generation=generation,
        now=now,
    )
