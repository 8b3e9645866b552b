"""Deterministic names of everything the operator creates, so a restart can never create a twin."""

from __future__ import annotations

import hashlib
import re

from agentjobs.models.resources import GROUP

LABEL_EXECUTION = f"{GROUP}/execution"
LABEL_PHASE = f"{GROUP}/phase"
LABEL_ATTEMPT = f"{GROUP}/attempt"
MANAGED_BY = {"app.kubernetes.io/managed-by": "agentjobs"}
# Keeps a phase pod until its run is recorded (contract/phase/pod_tracking.py says why).
POD_FINALIZER = f"{GROUP}/run-record"
# When a tracked pod's deletion was asked for (contract/phase/pod_tracking.py says why it is kept).
ANNOTATION_DELETION_REQUESTED = f"{GROUP}/deletion-requested-at"
# A pod's own prompt, which its prompt volume shows as a file (kube/prompts.py).
ANNOTATION_PROMPT = f"{GROUP}/prompt"
_MAX_NAME = 55  # room for "-a<attempt>", "-prompt" and "-storage" within 63 characters
_DIGITS = 20  # a hashed Phase name's last token: about 66 bits of SHA-256
_INDEX = re.compile(r"0|[1-9][0-9]*")  # how str() writes an index


def _shortened(text: str, room: int) -> str:
    """The first ``room`` characters of a name, never ending in '-' or '.' (which would leave
    '-.' or '.-' before what is appended)."""
    return text[:room].rstrip("-.")


def label_value(name: str) -> str:
    """``name`` as a label value (at most 63 characters), shortened with a hash when needed
    (a selector by it is narrowed by the full name afterwards)."""
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{_shortened(name, _MAX_NAME - 9)}-{digest}"


def phase_resource(execution: str, index: int, phase: str) -> str:
    """R54: ``<execution>-<index>-<phase>``, unless that could be another Phase's name.

    Read from the right, the plain form's last token (between dashes) that is written as
    an index is the index, when no token of ``phase`` is: the execution is what precedes
    it, the phase what follows, so two inputs with one plain form are one input. Otherwise,
    or when it is too long, the name is its beginning followed by a hash of the three parts
    in decimal, written as an index: a plain form never ends with such a token, so a hashed
    name is never a plain one, and two hashed names are one only if SHA-256 collides there.
    """
    plain = f"{execution}-{index}-{phase}"
    if len(plain) <= _MAX_NAME and not any(_INDEX.fullmatch(t) for t in phase.split("-")):
        return plain
    whole = int.from_bytes(hashlib.sha256(f"{execution}/{index}/{phase}".encode()).digest())
    digest = 10 ** (_DIGITS - 1) + whole % (9 * 10 ** (_DIGITS - 1))  # no leading zero
    return f"{_shortened(plain, _MAX_NAME - _DIGITS - 1)}-{digest}"


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


def stop_secret(phase_resource_name: str, phase_uid: str, attempt: int) -> str:
    """The Secret with one attempt's stop token (R70), unique to it as the storage one is."""
    return f"{phase_resource_name}-a{attempt}-stop-{phase_uid}"


def storage_secret(phase_resource_name: str, phase_uid: str, attempt: int) -> str:
    """Unique to one attempt of one Phase object: a retry, or a Phase of the same name
    re-created later, gets its own (with its own token)."""
    return f"{phase_resource_name}-a{attempt}-storage-{phase_uid}"


def grader_storage_secret(phase_resource_name: str, phase_uid: str, attempt: int) -> str:
    """The token of the grader of agent attempt ``attempt``."""
    return f"{phase_resource_name}-g{attempt}-storage-{phase_uid}"
