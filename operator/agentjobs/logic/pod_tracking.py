"""The finalizer that keeps a phase's pod until its run is recorded.

A pod deleted from outside while no runner watches it (the operator was
restarting, or had created the pod and died before recording it) would
otherwise vanish without a trace, and the next runner would create a twin
under the same name and run the agent again. As the Job controller does with
its tracking finalizer, every phase pod is created with this finalizer, so a
deletion only marks it (``deletionTimestamp``) until the operator has read
what the pod says and recorded the run; then the finalizer is removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjobs.logic import naming, ownership, phase_status
from agentjobs.models.resources import PhaseResourceStatus


def tracked(pod: Mapping[str, Any]) -> bool:
    """The pod still carries the finalizer."""
    return naming.POD_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or [])


def releasable(pod: Mapping[str, Any], phase: Mapping[str, Any] | None) -> bool:
    """Nothing more is to be learnt from ``pod``: its Phase is gone (or is another Phase of
    the same name), has recorded the run of this pod or of a later one, or has ended."""
    if phase is None or not ownership.owned_by(pod, (phase.get("metadata") or {}).get("uid", "")):
        return True
    status = PhaseResourceStatus.model_validate(phase.get("status") or {})
    if phase_status.is_terminal(status):
        return True
    current = status.pod_name == (pod.get("metadata") or {}).get("name")
    return status.run is not None or (status.pod_name is not None and not current)
