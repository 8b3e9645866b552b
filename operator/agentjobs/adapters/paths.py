"""API paths of the objects the operator reads and writes."""

from __future__ import annotations

from agentjobs.models.resources import API_VERSION


def execution(namespace: str, name: str = "") -> str:
    return f"/apis/{API_VERSION}/namespaces/{namespace}/executions" + (f"/{name}" if name else "")


def phase(namespace: str, name: str = "") -> str:
    return f"/apis/{API_VERSION}/namespaces/{namespace}/phases" + (f"/{name}" if name else "")


def pod(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/pods" + (f"/{name}" if name else "")


def config_map(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


def secret(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/secrets" + (f"/{name}" if name else "")


def lease(namespace: str, name: str = "") -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases" + (
        f"/{name}" if name else ""
    )


def all_executions() -> str:
    """Executions in every namespace."""
    return f"/apis/{API_VERSION}/executions"


def all_phases() -> str:
    """Phases in every namespace."""
    return f"/apis/{API_VERSION}/phases"


def all_pods() -> str:
    """Pods in every namespace."""
    return "/api/v1/pods"
