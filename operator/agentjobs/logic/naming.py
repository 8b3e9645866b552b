"""Deterministic names of everything the operator creates, so a restart can never create a twin."""

from __future__ import annotations

import hashlib

from agentjobs.models.resources import GROUP

LABEL_EXECUTION = f"{GROUP}/execution"
LABEL_PHASE = f"{GROUP}/phase"
LABEL_ATTEMPT = f"{GROUP}/attempt"
MANAGED_BY = {"app.kubernetes.io/managed-by": "agentjobs"}
# Keeps a phase pod until its run is recorded (logic/pod_tracking.py says why).
POD_FINALIZER = f"{GROUP}/run-record"
# When a tracked pod's deletion was asked for (logic/pod_tracking.py says why it is kept).
ANNOTATION_DELETION_REQUESTED = f"{GROUP}/deletion-requested-at"
_MAX_NAME = 55  # room for "-a<attempt>", "-prompt" and "-storage" within 63 characters


def _fit(name: str) -> str:
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: _MAX_NAME - 9].rstrip('-')}-{digest}"


def label_value(name: str) -> str:
    """``name`` as a label value (at most 63 characters), shortened with a hash when needed."""
    return name if len(name) <= 63 else _fit(name)


def phase_resource(execution: str, index: int, phase: str) -> str:
    """``<execution>-<index>-<phase>``, shortened with a hash when too long for a label."""
    return _fit(f"{execution}-{index}-{phase}")


def pod(phase_resource_name: str, attempt: int) -> str:
    return f"{phase_resource_name}-a{attempt}"


def grader_pod(phase_resource_name: str, attempt: int) -> str:
    """The pod that grades agent attempt ``attempt`` (pod ``-a<attempt>``): ``-g<attempt>``."""
    return f"{phase_resource_name}-g{attempt}"


def prompt_config_map(phase_resource_name: str) -> str:
    return f"{phase_resource_name}-prompt"


def pod_config_map(pod_name: str) -> str:
    """The prompt ConfigMap of a revised agent attempt's or a grader's pod (R38, R42)."""
    return f"{pod_name}-prompt"


def storage_secret(phase_resource_name: str, phase_uid: str, attempt: int) -> str:
    """Unique to one attempt of one Phase object: a retry, or a Phase of the same name
    re-created later, gets its own (with its own token)."""
    return f"{phase_resource_name}-a{attempt}-storage-{phase_uid}"


def grader_storage_secret(phase_resource_name: str, phase_uid: str, attempt: int) -> str:
    """The token of the grader of agent attempt ``attempt``."""
    return f"{phase_resource_name}-g{attempt}-storage-{phase_uid}"
