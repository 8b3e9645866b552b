"""What an Execution should do next and what its status says (R23-R27), from its Phases.

The operator lists the Phases the Execution owns (by UID) and hands them
here; the answer is which Phase to create (at most one, in order), which
running Phases to cancel, and the Execution's whole status. Nothing here
talks to the API.

The status is a pure function of the Phases and the previous status, so
that a reconcile that changes nothing writes nothing: time enters only
where something changes, and an ended execution keeps the status it ended
with. A Phase the previous status lists but that no longer exists was
deleted from outside: the execution ends ``interrupted`` (R22a) naming it,
and that phase is never created again. A resumed execution (R48) lists the
phases it inherited first, counts them toward finishing but not toward its
fields (R27), and hands the first phase it runs what its parent handed on,
once its status records that; a resume that cannot be made ends it ``failed``
before anything runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from agentjobs.contract.execution import budget, execution, resume
from agentjobs.contract.outcome import outcome as outcome_rules
from agentjobs.contract.outcome import status_budget
from agentjobs.contract.phase.phase_status import is_terminal
from agentjobs.contract.repositories import status as repository_status
from agentjobs.kube import conditions
from agentjobs.kube.status_patch import status_patch
from agentjobs.models.contract import (
    Artifact,
    ExecutionStatus,
    FailureClassification,
    FailureKind,
    PhaseStatus,
    SystemFailure,
    TaskOutcome,
)
from agentjobs.models.limits import ExecutionBudget
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import (
    ExecutionResourceStatus,
    PhaseResourceStatus,
    PhaseSummary,
)
from agentjobs.models.resources import ExecutionSpec, PhaseSpec
from agentjobs.models.storage import HandoffRef


@dataclass(frozen=True)
class ChildPhase:
    """One Phase of the Execution, as read from the API."""

    resource_name: str
    spec: PhaseSpec
    status: PhaseResourceStatus


@dataclass(frozen=True)
class ExecutionPlan:
    """What to do: create phase ``create_index`` (handing it ``inputs`` and what is left of
    the ``budget``, R71), cancel or interrupt (R44) running phases, write status."""

    create_index: int | None
    inputs: HandoffRef | None = None
    budget: ExecutionBudget | None = None
    # R63: what the phases before it recorded of each repository, in order.
    repositories_before: list[list[RepositoryStatus]] = field(default_factory=list)
    cancel: list[str] = field(default_factory=list)
    interrupt: list[str] = field(default_factory=list)
    status: ExecutionResourceStatus = field(default_factory=ExecutionResourceStatus)


INTERRUPTED_BETWEEN_PHASES = SystemFailure(
    kind=FailureKind.TRANSIENT,
    code="interrupted",
    message="The execution was interrupted before its next phase started.",
)


def handed_off(previous: ChildPhase | None) -> HandoffRef | None:
    """R35: the manifest of the previous phase's stored artifacts, for the next phase."""
    if previous is None or previous.status.handoff is None or not previous.status.handoff.count:
        return None
    return previous.status.handoff


def _record(child: ChildPhase) -> execution.PhaseRecord:
    status = child.status
    return execution.PhaseRecord(
        name=child.spec.name,
        status=status.status or PhaseStatus.RUNNING,
        failure_classification=status.failure_classification,
        reported_failure_reason=status.reported_failure_reason,
        reported_side_effects=status.report.side_effects if status.report else None,
        artifacts=[
            Artifact(
                path=a.path, title=a.title, size=a.size, recovered=a.recovered, kept_as=a.kept_as
            )
            for a in status.artifacts
        ],
        task_outcome=status.task_outcome,
        usage=status.usage,
        artifact_count=status.artifact_count,
    )


def _deleted_phase(previous: ExecutionResourceStatus, ordered: Sequence[ChildPhase]) -> str | None:
    """The first phase of its own the previous status recorded that no longer exists."""
    present = {child.spec.name for child in ordered}
    return next(
        (p.name for p in previous.phases if p.name not in present and p.inherited_from is None),
        None,
    )


def _deleted_outcome(phase_name: str, *, now: datetime) -> TaskOutcome:
    return outcome_rules.from_failure(
        SystemFailure(
            kind=FailureKind.TRANSIENT,
            code="PhaseDeleted",
            message=f"phase {phase_name!r} was deleted from outside the operator; "
            "the execution cannot go on (create a new Execution to run it again)",
        ),
        now=now,
    )


def _stable_outcome(
    outcome: TaskOutcome | None, previous: TaskOutcome | None
) -> TaskOutcome | None:
    """``outcome``, keeping the previous report time when nothing else changed."""
    if outcome is None or previous is None:
        return outcome
    same = outcome.model_copy(update={"reported_at": previous.reported_at})
    return previous if same == previous else outcome


def plan_execution(
    spec: ExecutionSpec,
    children: Sequence[ChildPhase],
    *,
    previous: ExecutionResourceStatus,
    generation: int | None,
    now: datetime,
    resumption: resume.Resumption | SystemFailure | None = None,
) -> ExecutionPlan:
    """``resumption``: what a resumed execution inherits, or why it cannot resume, when this
    reconcile read its parent; else what the previous status recorded."""
    if previous.status is not None and previous.status is not ExecutionStatus.RUNNING:
        # Ended: the verdict stands, whatever happens to the Phases later.
        return ExecutionPlan(create_index=None, status=_observed(previous, generation))
    if isinstance(resumption, SystemFailure):
        return ExecutionPlan(
            create_index=None, status=_refused(resumption, previous, generation, now)
        )
    resumed = resumption or resume.recorded(previous)
    inherited = list(resumed.phases) if resumed else []
    ordered = sorted(children, key=lambda child: child.spec.index)
    summary = execution.summarize(
        [execution.PhaseRecord(name=p.name, status=p.status, inherited=True) for p in inherited]
        + [_record(c) for c in ordered],
        phase_count=len(spec.phases),
    )
    status, current, outcome = summary.status, summary.current_phase, summary.task_outcome
    create_index: int | None = None
    cancel: list[str] = []
    interrupt: list[str] = []
    deleted = _deleted_phase(previous, ordered)
    if deleted is not None and status is ExecutionStatus.RUNNING:
        status, current = ExecutionStatus.INTERRUPTED, deleted
        outcome = _deleted_outcome(deleted, now=now)
        cancel = [
            c.resource_name for c in ordered if not is_terminal(c.status) and not c.spec.cancel
        ]
    elif status is ExecutionStatus.RUNNING:
        active = [c for c in ordered if not is_terminal(c.status)]
        if spec.interrupt:  # R44: the running phase ends interrupted, and so does the execution
            interrupt = [c.resource_name for c in active if not c.spec.interrupt]
            if not active:
                status, current, outcome = (
                    ExecutionStatus.INTERRUPTED,
                    None,
                    outcome_rules.from_failure(INTERRUPTED_BETWEEN_PHASES, now=now),
                )
        elif spec.cancel:
            cancel = [c.resource_name for c in active if not c.spec.cancel]
            if not active:
                status, current, outcome = (
                    ExecutionStatus.CANCELLED,
                    None,
                    outcome_rules.cancelled(
                        "The execution was cancelled before its next phase started.", now=now
                    ),
                )
        elif not active and len(inherited) + len(ordered) < len(spec.phases):
            create_index = len(inherited) + len(ordered)
            current = spec.phases[create_index].name
    classification = summary.failure_classification
    spent_out = None
    if create_index is not None:
        spent_out = budget.refusal(spec.limits, summary.usage, spec.phases[create_index].name)
    if spent_out is not None:  # R71: the phase is not started, and the execution ends
        status, create_index = ExecutionStatus.FAILED, None
        outcome = outcome_rules.from_failure(spent_out, now=now)
        classification = FailureClassification.PLATFORM
    outcome = _stable_outcome(outcome, previous.task_outcome)
    finished = status is not ExecutionStatus.RUNNING
    message = outcome.summary if finished and outcome else f"phase {current or '-'} is running"
    phases = inherited + _summaries(ordered, previous.phases, deleted)
    if isinstance(resumption, resume.Resumption):
        # R48: what was inherited is recorded before the first own phase exists, so no
        # reconcile after that needs the parent (gone or re-created by then, perhaps).
        create_index = None
    inputs: HandoffRef | None = None
    if create_index is not None:
        inputs = handed_off(ordered[-1]) if ordered else resumed.record.handoff if resumed else None
    return ExecutionPlan(
        create_index=create_index,
        inputs=inputs,
        budget=budget.for_phase(spec.limits, summary.usage) if create_index is not None else None,
        repositories_before=[
            (resumed.record.repositories or []) if resumed else [],
            *(child.status.repositories or [] for child in ordered),
        ],
        cancel=cancel,
        interrupt=interrupt,
        status=ExecutionResourceStatus(
            status=status,
            current_phase=current,
            failure_classification=classification,
            reported_failure_reason=summary.reported_failure_reason,
            deliverable_produced=summary.deliverable_produced,
            reported_side_effects=summary.reported_side_effects,
            artifact_count=summary.artifact_count,
            phases=phases,
            outcome=next((p.outcome for p in reversed(phases) if p.outcome is not None), None),
            task_outcome=outcome,
            usage=summary.usage,
            limits=budget.uses(spec.limits, summary.usage),
            repositories=repository_status.latest(
                [
                    resumed.record.repositories if resumed else None,
                    *(c.status.repositories for c in ordered),
                ]
            ),
            started_at=previous.started_at or now,
            finished_at=(previous.finished_at or now) if finished else None,
            resumed_from=resumed.record if resumed else None,
            observed_generation=generation,
            conditions=conditions.conditions_for(
                status.value,
                message=message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        ),
    )


def _summaries(
    ordered: Sequence[ChildPhase], recorded: Sequence[PhaseSummary], deleted: str | None
) -> list[PhaseSummary]:
    """One entry per phase started, in order; a deleted phase is listed ``interrupted``."""
    summaries = [
        PhaseSummary(
            name=c.spec.name,
            status=c.status.status or PhaseStatus.RUNNING,
            deliverable_recovered=bool(c.status.deliverable_recovered),
            reported_side_effects=execution.counted_side_effects(
                c.status.status, c.status.report.side_effects if c.status.report else None
            ),
            outcome=c.status.outcome.result if c.status.outcome else None,
        )
        for c in ordered
    ]
    if deleted is None:
        return summaries
    by_name = {s.name: s for s in summaries}
    by_name[deleted] = PhaseSummary(name=deleted, status=PhaseStatus.INTERRUPTED)
    names = [p.name for p in recorded] + [s.name for s in summaries]
    return [by_name[name] for name in dict.fromkeys(names) if name in by_name]


def _refused(
    failure: SystemFailure,
    previous: ExecutionResourceStatus,
    generation: int | None,
    now: datetime,
) -> ExecutionResourceStatus:
    """A resumed execution that cannot resume (R48): failed before any phase ran."""
    outcome = outcome_rules.from_failure(failure, now=now)
    return ExecutionResourceStatus(
        status=ExecutionStatus.FAILED,
        failure_classification=FailureClassification.PLATFORM,
        deliverable_produced=False,
        artifact_count=0,
        task_outcome=outcome,
        started_at=previous.started_at or now,
        finished_at=now,
        observed_generation=generation,
        conditions=conditions.conditions_for(
            ExecutionStatus.FAILED.value,
            message=failure.message,
            previous=previous.conditions,
            generation=generation,
            now=now,
        ),
    )


def phase_refused(
    status: ExecutionResourceStatus,
    failure: SystemFailure,
    *,
    previous: ExecutionResourceStatus,
    generation: int | None,
    now: datetime,
) -> ExecutionResourceStatus:
    """``status`` once the API server refused to create the next Phase (its policy, or a
    spec of an Execution admitted under an older schema): another try gets the same answer,
    so the execution ends failed, with the refusal's words, and nothing is tried again."""
    return status.model_copy(
        update={
            "status": ExecutionStatus.FAILED,
            "failure_classification": FailureClassification.PLATFORM,
            "task_outcome": outcome_rules.from_failure(failure, now=now),
            "finished_at": now,
            "conditions": conditions.conditions_for(
                ExecutionStatus.FAILED.value,
                message=failure.message,
                previous=previous.conditions,
                generation=generation,
                now=now,
            ),
        }
    )


def _observed(status: ExecutionResourceStatus, generation: int | None) -> ExecutionResourceStatus:
    """An ended execution's status, marked as having seen the current generation."""
    return status.model_copy(
        update={
            "observed_generation": generation,
            "conditions": [
                c.model_copy(update={"observed_generation": generation}) for c in status.conditions
            ],
        }
    )


def settled(
    spec: ExecutionSpec,
    children: Sequence[ChildPhase],
    written: ExecutionResourceStatus,
    *,
    generation: int | None,
    now: datetime,
) -> bool:
    """Whether a reconcile of the status just ``written`` (the same Phases) would do nothing:
    then that write's own event need not be reconciled. Not so for a resumed execution
    whose inheritance was just recorded (its first Phase comes at the next reconcile)."""
    if resume.needs_parent(spec, written):
        return False
    again = plan_execution(spec, children, previous=written, generation=generation, now=now)
    return (
        again.create_index is None
        and not again.cancel
        and not again.interrupt
        and status_patch(status_budget.fit_execution(again.status), written) is None
    )
