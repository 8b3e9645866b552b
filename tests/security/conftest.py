"""Fixtures of the security suite: a tenant who may only run Executions, and a victim.

- `tenant`: the test's namespace and a kubectl acting as a ServiceAccount there that may
  create, get, list and watch Executions and get, list and watch Phases, nothing else
  (no Secrets, ConfigMaps, pods or logs). Whatever a test shows it reaching, it reached
  through the operator.
- `victim`: another namespace holding a Secret and a ConfigMap named `canary`, each with
  a random value under the key `value`; `leaks(kubectl, namespace, value)` says where in
  a namespace (every object the operator may write, and the pods' logs) that value shows.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devcluster.operator_account import token_kubeconfig
from devcluster.testing import DevCluster, Kubectl
from tests.integration.operator_fixtures import wait_for

TENANT_ACCOUNT = "tenant"
TENANT_RULES = [
    {"apiGroups": ["agentjobs.io"], "resources": ["executions"],
     "verbs": ["create", "get", "list", "watch"]},
    {"apiGroups": ["agentjobs.io"], "resources": ["phases"], "verbs": ["get", "list", "watch"]},
]  # fmt: skip
# What the operator writes in a tenant's namespace, where a stolen value could come back.
WRITTEN_KINDS = "executions,phases,configmaps,secrets,events,pods"


@dataclass(frozen=True)
class Tenant:
    namespace: str
    kubectl: Kubectl


@dataclass(frozen=True)
class Victim:
    namespace: str
    value: str


@pytest.fixture
def tenant(
    kubectl: Kubectl, crds: None, namespace: str, local_cluster: DevCluster, tmp_path: Path
) -> Tenant:
    kubectl.run("create", "serviceaccount", TENANT_ACCOUNT, "-n", namespace)
    kubectl.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "tenant"},
            "rules": TENANT_RULES,
        },
        namespace,
    )
    kubectl.run(
        "create", "rolebinding", "tenant", "-n", namespace, "--role=tenant",
        f"--serviceaccount={namespace}:{TENANT_ACCOUNT}",
    )  # fmt: skip
    as_tenant = kubectl.with_kubeconfig(
        token_kubeconfig(kubectl.env, namespace, TENANT_ACCOUNT, tmp_path / "tenant.kubeconfig")
    )
    wait_for(
        lambda: (
            as_tenant.run("auth", "can-i", "create", "executions", check=False).stdout.strip()
            == "yes"
        ),
        what="the tenant's Role to take effect",
    )
    return Tenant(namespace=namespace, kubectl=as_tenant)


@pytest.fixture
def victim(kubectl: Kubectl, namespace: str) -> Iterator[Victim]:
    name = f"{namespace[:50]}-victim"
    value = f"canary-{secrets.token_hex(12)}"
    kubectl.run("create", "namespace", name)
    for kind in ("secret generic", "configmap"):
        kubectl.run("create", *kind.split(), "canary", "-n", name, f"--from-literal=value={value}")
    yield Victim(namespace=name, value=value)
    kubectl.run("delete", "namespace", name, "--wait=false")


def leaks(kubectl: Kubectl, namespace: str, value: str) -> list[str]:
    """Where ``value`` (plain or base64) shows in ``namespace``: objects by kind/name, and
    pods' logs by pod/container."""
    forms = (value, base64.b64encode(value.encode()).decode())
    found: list[str] = []
    objects = kubectl.json("get", WRITTEN_KINDS, "-n", namespace)["items"]
    for item in objects:
        text = str(item)
        if any(form in text for form in forms):
            found.append(f"{item['kind']}/{item['metadata']['name']}")
    for item in objects:
        if item["kind"] != "Pod":
            continue
        spec = item["spec"]
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            pod, name = item["metadata"]["name"], container["name"]
            log = kubectl.run("logs", "-n", namespace, pod, "-c", name, check=False).stdout
            if any(form in log for form in forms):
                found.append(f"log of {pod}/{name}")
    return found
