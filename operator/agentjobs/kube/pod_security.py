"""The security settings of phase pods: hardened by default, overridable per Execution.

The operator's defaults (``agentjobs run --pod-security-context``,
``--security-context``; the restricted profile unless told otherwise) apply to
every phase pod; a phase (or ``spec.defaults``) may override single fields,
which win over the operator's. The operator's own sidecars keep the
operator's container settings whatever the phase asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from agentjobs.models.kubernetes import (
    Capabilities,
    PodSecurityContext,
    SeccompProfile,
    SecurityContext,
)

Model = TypeVar("Model", bound=BaseModel)

RESTRICTED_POD = PodSecurityContext(
    run_as_non_root=True, seccomp_profile=SeccompProfile(type="RuntimeDefault")
)
RESTRICTED_CONTAINER = SecurityContext(
    allow_privilege_escalation=False,
    capabilities=Capabilities(drop=["ALL"]),
    read_only_root_filesystem=True,
)


@dataclass(frozen=True)
class PodSecurity:
    pod: PodSecurityContext = field(default_factory=lambda: RESTRICTED_POD)
    container: SecurityContext = field(default_factory=lambda: RESTRICTED_CONTAINER)


def merged(default: Model, override: Model | None) -> Model:
    """``default`` with every field that ``override`` sets replaced."""
    if override is None:
        return default
    return default.model_copy(update=override.model_dump(exclude_none=True))


def as_json(context: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = context.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
