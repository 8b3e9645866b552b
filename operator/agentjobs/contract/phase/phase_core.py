"""The phase core: the step a Phase's runner takes next, and the run facts of every way an
attempt (an agent's or a grader's) ends.

Pure: it reads the Phase's status, what the user asked (:class:`Stops`) and a pod's
manifest, and returns plain values; the runner performs the step and writes the status.
Every precedence between the user's stops and what a pod shows is decided here, once:

- R22 over R22a: a cancel wins over an interrupt, so a cancelled attempt whose pod is gone
  or never started is ``cancelled``, never ``interrupted``.
- R22a: a pod taken from its agent (disrupted, evicted, deleted by someone else, its node
  lost) interrupts the run; a deletion the operator made, to stop the phase or to remove
  a pod that will never start, does not.
- R61: a pod whose main container will never start ends the attempt at once, unless the
  pod is being taken away, which is the interrupt it is.
- R45, R44: an attempt the user stopped is never retried.
- R37, R22: only an attempt that resolved ``completed`` is graded, and none once cancelled;
  a grader asked to stop is ``interrupted`` (R44).
- R70: an attempt a limit stopped ends as that limit's failure, whatever its exit and
  whatever the pod shows after (its kill, a disruption while it was being stopped); only a
  cancel outweighs it.

The states a Phase's status can be found in (a restarted runner picks up from there):

- ``preparing``: no pod for the attempt yet: a retry's backoff, then the pod is made.
- ``running``: the pod exists: its start is awaited, then its log is read to its end, then
  its harvester's last sync; the run's facts are checkpointed (``status.run``): with
  storage in a write of their own, without it in the phase's next write.
- ``concluding``: the run is recorded: its artifacts are collected and the contract
  resolves the attempt; a retry (R45) or an evaluation (R37) may follow.
- ``grading``: the attempt's evaluation started and has not ended: its grader runs.
- ``ended``: the Phase's status is terminal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

from agentjobs.contract.grading import evaluation
from agentjobs.contract.limits import guard
from agentjobs.contract.phase import phase_status
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.kube import naming, pod_state
from agentjobs.kube.pod_state import AgentState, Stage
from agentjobs.models.contract import PhaseStatus, SystemFailure
from agentjobs.models.resource_status import PhaseResourceStatus

Pod = dict[str, Any]


@dataclass(frozen=True)
class Stops:
    """What the user asked of the phase: ``cancel`` it (R22, its spec's ``cancel``) or
    ``interrupt`` it (R44, its Execution interrupted). Once asked, never taken back."""

    cancel: bool = False
    interrupt: bool = False

    @property
    def requested(self) -> bool:
        """Either was asked: the pod is deleted, no pod is made, no backoff is waited out."""
        return self.cancel or self.interrupt

    def adding(self, *, cancel: bool = False, interrupt: bool = False) -> Stops:
        return Stops(cancel=self.cancel or cancel, interrupt=self.interrupt or interrupt)


class Step(Enum):
    """Where a Phase's status says its run stands; see the module's docstring."""

    PREPARING = "preparing"
    RUNNING = "running"
    CONCLUDING = "concluding"
    GRADING = "grading"
    ENDED = "ended"


def attempt_number(status: PhaseResourceStatus) -> int:
    return status.attempt or 1


def next_step(status: PhaseResourceStatus, *, phase_resource: str) -> Step:
    """The step the runner takes next, from the Phase's status alone."""
    if phase_status.is_terminal(status):
        return Step.ENDED
    if is_grading(status, phase_resource=phase_resource):
        return Step.GRADING
    if status.run is not None:  # judged before a restart: finish from the record
        return Step.CONCLUDING
    if status.pod_name is None:
        return Step.PREPARING
    return Step.RUNNING


def is_grading(status: PhaseResourceStatus, *, phase_resource: str) -> bool:
    """Whether the current attempt's evaluation was started and has not ended (R43)."""
    grader = naming.grader_pod(phase_resource, attempt_number(status))
    recorded = status.outcome
    return recorded is not None and any(
        e.grader_pod == grader and e.result is None for e in recorded.evaluations
    )


def not_started(stops: Stops, refusal: SystemFailure | None = None) -> RunFacts:
    """No pod was made: the phase was stopped first (R22 over R22a), or what it needs
    refused it (``refusal``, R60, R61)."""
    return RunFacts(
        exit_code=None,
        stream_intact=False,
        cancelled=stops.cancel,
        interrupted=stops.interrupt and not stops.cancel,
        system_failure=refusal,
    )


def vanished(stops: Stops, noticed: SystemFailure | None = None) -> RunFacts:
    """R22a: the pod is gone before its main container ended; cancelled when the user asked
    (the operator's deletion), else interrupted, with the disruption ``noticed`` meanwhile."""
    return RunFacts(
        exit_code=None,
        stream_intact=False,
        cancelled=stops.cancel,
        interrupted=not stops.cancel,
        system_failure=None if stops.cancel else noticed,
    )


def interruption(
    pod: Pod, stops: Stops, *, deleted_by_operator: bool, agent: AgentState | None = None
) -> SystemFailure | None:
    """R22a from the pod's own signals; a deletion the operator made is not one."""
    stopping = deleted_by_operator or stops.requested
    return pod_state.interruption(pod, deleted_by_operator=stopping, agent=agent)


def never_starts(
    pod: Pod,
    waiting: SystemFailure | None,
    stops: Stops,
    *,
    deleted_by_operator: bool,
) -> RunFacts | None:
    """The run facts of a pod whose main container has not started and never will, or None
    while it may still. ``waiting`` is R61's failure, when what blocks it ends the phase."""
    taken = interruption(pod, stops, deleted_by_operator=deleted_by_operator)
    if taken is not None:
        return RunFacts(exit_code=None, stream_intact=False, interrupted=True, system_failure=taken)
    if deleted_by_operator and stops.requested:
        return vanished(stops)
    if waiting is not None:
        return RunFacts(exit_code=None, stream_intact=False, system_failure=waiting)
    return None


def log_read(
    pod: Pod,
    state: AgentState,
    stops: Stops,
    *,
    stream_intact: bool,
    noticed: SystemFailure | None,
    cli_error: SystemFailure | None,
    stopped: SystemFailure | None = None,
) -> RunFacts:
    """The facts of a run whose log was read (to its end or as far as it went), its pod as
    last seen; ``noticed`` is an interruption seen while it ran (R22a); ``stopped`` the
    limit that stopped it (R70)."""
    if stopped is not None:
        return RunFacts(
            exit_code=state.exit_code,
            stream_intact=stream_intact,
            cancelled=stops.cancel,
            interrupted=False,
            system_failure=stopped,
            agent_cli_error=cli_error,
        )
    failure = noticed
    if failure is None and state.stage is Stage.TERMINATED:
        failure = pod_state.termination_failure(pod, state)
    return RunFacts(
        exit_code=state.exit_code,
        stream_intact=stream_intact,
        cancelled=stops.cancel,
        interrupted=noticed is not None or stops.interrupt,
        system_failure=failure,
        agent_cli_error=cli_error,
    )


def with_final_status(
    run: RunFacts, pod: Pod, container: str, stops: Stops, *, deleted_by_operator: bool
) -> RunFacts:
    """The run's facts with what only the pod's final status says: the kubelet writes a
    deadline's or an eviction's reason there, after the container's own exit."""
    agent = pod_state.agent_state(pod, container)
    if run.cancelled or run.interrupted or agent.stage is not Stage.TERMINATED:
        return run
    if run.system_failure is not None and guard.stopped_by(run.system_failure.code):
        return run  # R70: the limit's stop, not the kill it asked for
    cut = interruption(pod, stops, deleted_by_operator=deleted_by_operator, agent=agent)
    if cut is not None:
        return dataclasses.replace(run, interrupted=True, system_failure=cut)
    failure = pod_state.termination_failure(pod, agent)
    return dataclasses.replace(run, system_failure=failure or run.system_failure)


def retry_withheld(stops: Stops) -> bool:
    """R45, R44: an attempt the user stopped (either way) is not retried."""
    return stops.requested


def graded(concluded: PhaseStatus | None, stops: Stops) -> bool:
    """R37: an attempt of a phase with an outcome is graded when it completed, unless the
    phase was cancelled meanwhile (R22); an interrupt lets the evaluation record it (R44)."""
    return not stops.cancel and evaluation.is_graded(concluded or PhaseStatus.FAILED)


def grading_stopped(stops: Stops) -> bool:
    """R44: an evaluation asked to stop before its grader ran is ``interrupted``."""
    return stops.requested


def grader_run(
    run: RunFacts, stops: Stops, cli_error: SystemFailure | None
) -> evaluation.GraderRun:
    """R40, R44: a grader's run as its evaluation judges it; stopped either way, it was
    interrupted."""
    return evaluation.GraderRun(
        exit_code=run.exit_code,
        stream_intact=run.stream_intact,
        interrupted=run.interrupted or run.cancelled or stops.interrupt,
        system_failure=run.system_failure,
        cli_error=cli_error,
    )


class AfterEvaluation(Enum):
    """What follows an evaluation's end (R41, R42, R22)."""

    CANCELLED = "cancelled"
    REVISE = "revise"
    END = "end"


def after_evaluation(
    evaluated: evaluation.Evaluated, stops: Stops, *, handed_on: bool
) -> AfterEvaluation:
    """A cancel ends the phase cancelled whatever the grade; a revision needs the graded
    attempt's hand-off (its ``previous/``); anything else ends the loop."""
    if stops.cancel:
        return AfterEvaluation.CANCELLED
    if evaluated.next_iteration is not None and handed_on:
        return AfterEvaluation.REVISE
    return AfterEvaluation.END
