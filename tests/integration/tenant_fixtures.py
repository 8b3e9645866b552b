"""A tenant: a ServiceAccount bound to the built-in `edit` role in the test's namespace, with
the chart's aggregated roles applied, as `kubectl` and by its token."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from devcluster.build import KUBERNETES_VERSION
from devcluster.manifests import CHART, RELEASE
from devcluster.operator_account import token_kubeconfig
from devcluster.testing import Kubectl
from tests.integration.operator_fixtures import wait_for

TENANT = "tenant"


@pytest.fixture
def other_namespace(kubectl: Kubectl, namespace: str) -> Iterator[str]:
    name = f"{namespace[:50]}-b"
    kubectl.run("create", "namespace", name)
    yield name
    kubectl.run("delete", "namespace", name, "--wait=false")


@pytest.fixture
def tenant(
    kubectl: Kubectl, crds: None, namespace: str, s3_env: dict[str, str], tmp_path: Path
) -> Kubectl:
    """kubectl as a ServiceAccount bound to the built-in `edit` role in the test's namespace."""
    aggregated = subprocess.run(
        [
            *("helm", "template", RELEASE, str(CHART), "--kube-version", KUBERNETES_VERSION),
            *("--show-only", "templates/aggregate-roles.yaml"),
        ],
        env=s3_env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for role in yaml.safe_load_all(aggregated):
        kubectl.apply(role, namespace)
    kubectl.run("create", "serviceaccount", TENANT, "-n", namespace)
    kubectl.run(
        "create", "rolebinding", "tenant-edit", "-n", namespace,
        "--clusterrole=edit", f"--serviceaccount={namespace}:{TENANT}",
    )  # fmt: skip
    as_tenant = kubectl.with_kubeconfig(
        token_kubeconfig(kubectl.env, namespace, TENANT, tmp_path / "tenant.kubeconfig")
    )
    # The aggregation controller adds the chart's rules to `edit` in a moment.
    wait_for(
        lambda: (
            as_tenant.run("auth", "can-i", "create", "executions", check=False).stdout.strip()
            == "yes"
        ),
        timeout=30,
        what="edit to include Executions",
    )
    return as_tenant
