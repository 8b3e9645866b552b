"""R48: what a resumed Execution inherits from its parent, or why it cannot resume.

A resumed Execution names its parent by ``spec.resumeFrom`` (same namespace).
The operator reads the parent until it has recorded what was inherited in the
resumed Execution's ``status.resumedFrom`` (the parent's UID, and the hand-off
its first own phase receives) and the inherited ``phases[]``; from then on the
parent is never read again, so a parent deleted, or re-created under its name,
changes nothing.

Decisions where the contract is silent:

- "its phases up to its first unfinished one are the same": the phases before
  it, which are inherited, must be the same as the parent's spec holds them,
  defaults applied, except where artifacts are stored; the first unfinished one
  and those after it may differ (that is how a failed phase is fixed).
- The resumed Execution must have a phase left to run.
- A resume that cannot be made ends the Execution ``failed`` (``platform``)
  before anything runs, its ``taskOutcome`` ``blocked`` by a ``config``
  blocker that needs the user, its ``terminalReason`` one of the codes below.
- A parent that was itself resumed hands on what it inherited: ``inheritedFrom``
  names the Execution that ran the phase, and when the last inherited phase
  is one the parent inherited too, the hand-off is the one the parent recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjobs.contract.phase import phase_status
from agentjobs.contract.repositories import status as repository_status
from agentjobs.models.contract import ExecutionStatus, FailureKind, PhaseStatus, SystemFailure
from agentjobs.models.repositories import RepositoryStatus
from agentjobs.models.resource_status import ExecutionResourceStatus, PhaseSummary, ResumedFrom
from agentjobs.models.resources import ExecutionSpec
from agentjobs.models.storage import HandoffRef

RESUMABLE = frozenset(
    {ExecutionStatus.FAILED, ExecutionStatus.CANCELLED, ExecutionStatus.INTERRUPTED}
)
# Where the phases may differ: an Execution's storage is its own, not part of what a phase does.
_NOT_COMPARED = {"execution_name", "artifacts", "inputs"}


@dataclass(frozen=True)
class Parent:
    """The Execution ``spec.resumeFrom`` names, as read from the API."""

    name: str
    uid: str
    spec: ExecutionSpec
    status: ExecutionResourceStatus

    @classmethod
    def from_api(cls, body: Mapping[str, Any]) -> Parent:
        """The parent from the API's JSON of it."""
        return cls(
            name=body["metadata"]["name"],
            uid=body["metadata"]["uid"],
            spec=ExecutionSpec.model_validate(body["spec"]),
            status=ExecutionResourceStatus.model_validate(body.get("status") or {}),
        )


@dataclass(frozen=True)
class Inheritance:
    """The parent's completed phases, which the resumed Execution takes over."""

    parent: Parent
    phases: tuple[PhaseSummary, ...]

    @property
    def handoff_phase(self) -> tuple[int, str] | None:
        """The index and name of the parent's own Phase whose status holds the hand-off;
        None when nothing is inherited or the parent inherited that phase itself."""
        if not self.phases or self.phases[-1].inherited_from != self.parent.name:
            return None
        return len(self.phases) - 1, self.phases[-1].name


@dataclass(frozen=True)
class Resumption:
    """What the plan needs of a resumed Execution: the record and the inherited phases."""

    record: ResumedFrom
    phases: tuple[PhaseSummary, ...]


def refusal(code: str, message: str) -> SystemFailure:
    return SystemFailure(kind=FailureKind.CONFIG, code=code, message=f"resumeFrom: {message}")


def needs_parent(spec: ExecutionSpec, previous: ExecutionResourceStatus) -> bool:
    """Whether this reconcile must read the parent: resumed, not yet recorded, not ended."""
    return (
        spec.resume_from is not None
        and previous.resumed_from is None
        and previous.status in (None, ExecutionStatus.RUNNING)
    )


def recorded(previous: ExecutionResourceStatus) -> Resumption | None:
    """What an earlier reconcile recorded, so the parent need not be read again."""
    if previous.resumed_from is None:
        return None
    inherited = tuple(p for p in previous.phases if p.inherited_from is not None)
    return Resumption(record=previous.resumed_from, phases=inherited)


def inherit(
    spec: ExecutionSpec, parent: Parent | None, *, name: str
) -> Inheritance | SystemFailure:
    """The phases ``spec`` inherits from ``parent`` (named ``name``), or why it cannot."""
    if parent is None:
        return refusal("ResumeParentNotFound", f"there is no Execution {name!r} in this namespace")
    ended = parent.status.status
    if ended is ExecutionStatus.COMPLETED:
        return refusal(
            "ResumeParentCompleted",
            f"Execution {name!r} completed; there is nothing to resume "
            "(apply a new Execution to run it again)",
        )
    if ended not in RESUMABLE:
        return refusal(
            "ResumeParentNotEnded",
            f"Execution {name!r} has not ended (it is {ended or 'not started'}); "
            "only an execution that ended failed, cancelled or interrupted can be resumed",
        )
    completed = _leading_completed(parent.status.phases)
    if len(spec.phases) <= len(completed):
        return refusal(
            "ResumeNothingLeft",
            f"Execution {name!r} completed its first {len(completed)} phase(s) and this "
            f"execution has {len(spec.phases)}: nothing is left to run",
        )
    for index in range(len(completed)):
        differing = _differences(parent.spec, spec, index, execution_name=name)
        if differing:
            return refusal(
                "ResumePhasesDiffer",
                f"phase {index + 1} ({parent.spec.phases[index].name!r}), which Execution "
                f"{name!r} completed, is not the same here ({', '.join(differing)} differ); "
                f"only the phases from {spec.phases[len(completed)].name!r} on may change",
            )
    inherited = tuple(
        p.model_copy(update={"inherited_from": p.inherited_from or parent.name}) for p in completed
    )
    return Inheritance(parent=parent, phases=inherited)


def resumption(
    inheritance: Inheritance,
    phase_handoff: HandoffRef | None,
    phase_repositories: Sequence[RepositoryStatus] | None = None,
) -> Resumption:
    """``inheritance`` with the hand-off of its last phase: ``phase_handoff``, from the status
    of the parent's Phase that ``handoff_phase`` names, or the one the parent inherited; and
    where the repositories stood (R63): ``phase_repositories`` from that same Phase, over
    what the parent inherited."""
    parent = inheritance.parent
    handoff = phase_handoff
    inherited = parent.status.resumed_from
    if inheritance.handoff_phase is None and inheritance.phases and inherited:
        handoff = inherited.handoff
    repositories = repository_status.latest(
        [inherited.repositories if inherited and inheritance.phases else None, phase_repositories]
    )
    return Resumption(
        record=ResumedFrom(
            name=parent.name,
            uid=parent.uid,
            handoff=handoff if handoff is not None and handoff.count else None,
            repositories=repositories,
        ),
        phases=inheritance.phases,
    )


def resumed_spec(parent_spec: Mapping[str, Any], *, parent_name: str) -> dict[str, Any]:
    """The spec of an Execution resuming ``parent_name`` (as the API returns its spec):
    the same spec, but that it resumes and is not cancelled or interrupted."""
    spec = {k: v for k, v in parent_spec.items() if k not in ("cancel", "interrupt")}
    return {**spec, "resumeFrom": {"name": parent_name}}


def resumed_name(parent_name: str, number: int) -> str:
    """The default name of a resumed Execution: ``<parent>-r<n>``, the lowest n not taken."""
    return f"{parent_name}-r{number}"


def describe(inheritance: Inheritance, spec: ExecutionSpec) -> str:
    """What a resumed Execution inherits and runs, for people."""
    inherited = ", ".join(f"{p.name} (from {p.inherited_from})" for p in inheritance.phases)
    runs = ", ".join(p.name for p in spec.phases[len(inheritance.phases) :])
    return f"inherits {inherited or 'no phase'}; runs {runs}"


def handoff_gone(parent: Parent, resource_name: str) -> SystemFailure:
    return refusal(
        "ResumeHandoffGone",
        f"Phase {resource_name!r} of Execution {parent.name!r} is gone, "
        "so its artifacts cannot be handed on",
    )


def _leading_completed(phases: Sequence[PhaseSummary]) -> list[PhaseSummary]:
    completed = []
    for phase in phases:
        if phase.status is not PhaseStatus.COMPLETED:
            break
        completed.append(phase)
    return completed


def _template(spec: ExecutionSpec, index: int, *, execution_name: str) -> dict[str, Any]:
    phase = phase_status.phase_spec(spec, execution_name=execution_name, index=index)
    dumped: dict[str, Any] = phase.model_dump(
        mode="json", by_alias=True, exclude=_NOT_COMPARED, exclude_none=True
    )
    return dumped


def _differences(
    parent: ExecutionSpec, spec: ExecutionSpec, index: int, *, execution_name: str
) -> list[str]:
    """The fields (by their API names) in which phase ``index`` differs, defaults applied."""
    theirs = _template(parent, index, execution_name=execution_name)
    ours = _template(spec, index, execution_name=execution_name)
    return sorted(key for key in theirs.keys() | ours.keys() if theirs.get(key) != ours.get(key))
