"""API paths of the objects the operator reads and writes: the one place that builds them.

Names come from specs a tenant writes. The CRD schema refuses a name that is
not one (R53), but a path must not depend on that: a segment the API server
would refuse as a name (empty, ``.``, ``..``, or with a ``/`` or ``%``:
apimachinery's IsValidPathSegmentName) is refused here first, with
:class:`InvalidName`, and every other one is percent-quoted, so no name can
add, remove or resolve a segment. The session sends the path as built
(adapters/kube.py), never normalised again.
"""

from __future__ import annotations

from urllib.parse import quote

from agentjobs.models.resources import API_VERSION

_CORE = "/api/v1"
_AGENTJOBS = f"/apis/{API_VERSION}"
_COORDINATION = "/apis/coordination.k8s.io/v1"


class InvalidName(ValueError):
    """A namespace or name that cannot be one path segment."""


def segment(value: str) -> str:
    """``value`` as one path segment, percent-quoted; InvalidName for what is none."""
    if value in ("", ".", "..") or "/" in value or "%" in value:
        raise InvalidName(
            f"{value!r} is not a valid object name or namespace (it may not be empty, '.' "
            "or '..', nor contain '/' or '%')"
        )
    return quote(value, safe="")


def _namespaced(prefix: str, namespace: str, plural: str, name: str | None) -> str:
    path = f"{prefix}/namespaces/{segment(namespace)}/{plural}"
    return path if name is None else f"{path}/{segment(name)}"


def execution(namespace: str, name: str | None = None) -> str:
    return _namespaced(_AGENTJOBS, namespace, "executions", name)


def cron_execution(namespace: str, name: str | None = None) -> str:
    return _namespaced(_AGENTJOBS, namespace, "cronexecutions", name)


def phase(namespace: str, name: str | None = None) -> str:
    return _namespaced(_AGENTJOBS, namespace, "phases", name)


def pod(namespace: str, name: str | None = None) -> str:
    return _namespaced(_CORE, namespace, "pods", name)


def pod_log(namespace: str, name: str) -> str:
    return f"{pod(namespace, name)}/log"


def config_map(namespace: str, name: str | None = None) -> str:
    return _namespaced(_CORE, namespace, "configmaps", name)


def secret(namespace: str, name: str | None = None) -> str:
    return _namespaced(_CORE, namespace, "secrets", name)


def lease(namespace: str, name: str | None = None) -> str:
    return _namespaced(_COORDINATION, namespace, "leases", name)


def status(path: str) -> str:
    """The status subresource of the object at ``path``."""
    return f"{path}/status"


def all_executions() -> str:
    """Executions in every namespace."""
    return f"{_AGENTJOBS}/executions"


def all_cron_executions() -> str:
    """CronExecutions in every namespace."""
    return f"{_AGENTJOBS}/cronexecutions"


def all_phases() -> str:
    """Phases in every namespace."""
    return f"{_AGENTJOBS}/phases"


def all_pods() -> str:
    """Pods in every namespace."""
    return f"{_CORE}/pods"


def token_reviews() -> str:
    return "/apis/authentication.k8s.io/v1/tokenreviews"


def subject_access_reviews() -> str:
    return "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def self_subject_access_reviews() -> str:
    return "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
