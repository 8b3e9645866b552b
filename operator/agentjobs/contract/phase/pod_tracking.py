"""The finalizer that keeps a phase's pod until its run is recorded.

A pod deleted from outside while no runner watches it (the operator was
restarting, or had created the pod and died before recording it) would
otherwise vanish without a trace, and the next runner would create a twin
under the same name and run the agent again. As the Job controller does with
its tracking finalizer, every phase pod is created with this finalizer, so a
deletion only marks it (``deletionTimestamp``) until the operator has read
what the pod says and recorded the run; then the finalizer is removed.

A kept pod loses one fact, though: when the kubelet has stopped its containers
it deletes the pod again with no grace, and the API server then moves
``deletionTimestamp`` to that moment, so it no longer says when the deletion was
asked for (and so whether it came before or after the agent ended). The
operator writes that time on the pod as an annotation the first time it sees
the deletion still graceful.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from agentjobs.contract.phase import phase_status
from agentjobs.kube import naming, ownership
from agentjobs.models.resource_status import PhaseResourceStatus


def tracked(pod: Mapping[str, Any]) -> bool:
    """The pod still carries the finalizer."""
    return naming.POD_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or [])


def releasable(pod: Mapping[str, Any], phase: Mapping[str, Any] | None) -> bool:
    """Nothing more is to be learnt from ``pod``: its Phase is gone or going (a foreground
    deletion waits for the pod), is another Phase of the same name, has recorded the run of
    this pod or of a later one, or has ended."""
    meta = (phase or {}).get("metadata") or {}
    if (
        phase is None
        or meta.get("deletionTimestamp")
        or not ownership.owned_by(pod, meta.get("uid", ""))
    ):
        return True
    status = PhaseResourceStatus.model_validate(phase.get("status") or {})
    if phase_status.is_terminal(status):
        return True
    current = status.pod_name == (pod.get("metadata") or {}).get("name")
    return status.run is not None or (status.pod_name is not None and not current)


def deletion_to_record(pod: Mapping[str, Any]) -> str | None:
    """The time a tracked pod's deletion was asked for, when it is still readable from its
    graceful ``deletionTimestamp`` and not yet recorded on the pod; else None."""
    meta = pod.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    grace = meta.get("deletionGracePeriodSeconds")
    removal = meta.get("deletionTimestamp")
    if not tracked(pod) or naming.ANNOTATION_DELETION_REQUESTED in annotations:
        return None
    if not removal or not isinstance(grace, int) or grace <= 0:
        return None
    requested = datetime.fromisoformat(removal.replace("Z", "+00:00")) - timedelta(seconds=grace)
    return requested.strftime("%Y-%m-%dT%H:%M:%SZ")
