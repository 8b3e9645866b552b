"""Object names, laid out so that a person can browse them:

``<bucket>/[<prefix>/]namespaces/<namespace>/executions/<execution>/<index>-<phase>/attempt-<n>/``
holding ``output/<path>``, ``manifest.json`` (the harvester's), ``artifacts.json``
(the operator's hand-off, R35), ``transcript.log`` and ``work/<repo>/*.patch`` (R52);
the grader of attempt ``n`` (R38) stores the same under ``grader-<n>/`` beside it.

A per-Execution prefix is put in front of the namespace and execution, never
instead of them, and may not hold the segment ``namespaces``: the first
``namespaces`` segment of any key is then followed by the namespace it belongs
to, so no tenant's root can lie inside another's (a prefix such as
``<B's root>/0-x/attempt-1/output`` would otherwise put A's objects under B's,
for B's retention to delete and B's downloads to meet).
"""

from __future__ import annotations

from agentjobs.contract.artifacts import handoff
from agentjobs.models.storage import ObjectLocation

NAMESPACES = handoff.NAMESPACES
MANIFEST = "manifest.json"
TRANSCRIPT = "transcript.log"
OUTPUT = handoff.OUTPUT_OBJECTS
__all__ = ["ObjectLocation"]


def _clean_prefix(prefix: str | None) -> str:
    parts = [part for part in (prefix or "").split("/") if part]
    if any(part in (".", "..", NAMESPACES) for part in parts):
        raise ValueError(f"invalid artifact prefix: {prefix!r}")
    return "/".join(parts)


def execution_root(*, prefix: str | None, namespace: str, execution: str) -> str:
    """The key prefix under which all of one Execution's objects live."""
    parts = (_clean_prefix(prefix), NAMESPACES, namespace, "executions", execution)
    return "/".join(part for part in parts if part)


def belongs_to(key: str, *, namespace: str, execution: str) -> bool:
    """Whether ``key`` lies under an Execution's root: its first ``namespaces`` segment
    is followed by ``namespace``, ``executions`` and ``execution`` (what a reader checks a
    status's URL against before it serves the object)."""
    parts = key.split("/")
    if NAMESPACES not in parts or any(part in ("", ".", "..") for part in parts):
        return False
    at = parts.index(NAMESPACES)
    return parts[at + 1 : at + 4] == [namespace, "executions", execution] and len(parts) > at + 4


def attempt_root(*, execution_root: str, index: int, phase: str, attempt: int) -> str:
    return f"{execution_root}/{index}-{phase}/attempt-{attempt}"


def grader_root(*, execution_root: str, index: int, phase: str, attempt: int) -> str:
    """Where the grader of agent attempt ``attempt`` stores its own output and transcript."""
    return f"{execution_root}/{index}-{phase}/grader-{attempt}"


def output_key(attempt_root: str, path: str) -> str:
    """The key of an artifact; its path must be safe (R28: nothing outside the directory)."""
    return f"{attempt_root}/{OUTPUT}/{handoff.relative_artifact_path(path)}"


def manifest_key(attempt_root: str) -> str:
    return f"{attempt_root}/{MANIFEST}"


def handoff_key(attempt_root: str) -> str:
    return f"{attempt_root}/{handoff.HANDOFF_MANIFEST}"


def work_key(attempt_root: str, patch_path: str) -> str:
    """The key of a patch of unpushed work (R52), ``patch_path`` being ``work/<repo>/<name>``."""
    return f"{attempt_root}/{handoff.relative_artifact_path(patch_path)}"


def transcript_key(attempt_root: str) -> str:
    return f"{attempt_root}/{TRANSCRIPT}"
