"""What a resumed Execution inherits from its parent (R48), read from the watches."""

from __future__ import annotations

from agentjobs.contract.execution import resume
from agentjobs.kube import naming
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime.observed import Observed


def resumption_of(
    observed: Observed, namespace: str, spec: ExecutionSpec
) -> resume.Resumption | SystemFailure:
    """R48: what this execution inherits from its parent, read by name in its namespace
    (never patched), with the hand-off its last inherited phase's Phase holds; both as the
    watches show them."""
    assert spec.resume_from is not None
    name = spec.resume_from.name
    body = observed.execution(namespace, name)
    parent = None if body is None else resume.Parent.from_api(body)
    inheritance = resume.inherit(spec, parent, name=name)
    if isinstance(inheritance, SystemFailure):
        return inheritance
    if inheritance.handoff_phase is None:
        return resume.resumption(inheritance, None)
    index, phase_name = inheritance.handoff_phase
    # Found by its place, not its name: an older operator may have named it otherwise.
    phase = next(
        (
            item
            for item in observed.phases_of(inheritance.parent.uid)
            if (item["spec"].get("index"), item["spec"].get("name")) == (index, phase_name)
        ),
        None,
    )
    if phase is None:
        resource_name = naming.phase_resource(name, index, phase_name)
        return resume.handoff_gone(inheritance.parent, resource_name)
    status = PhaseResourceStatus.model_validate(phase.get("status") or {})
    return resume.resumption(inheritance, status.handoff, status.repositories)
