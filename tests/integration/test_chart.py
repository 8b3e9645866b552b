"""The rendered chart is accepted by the real API server (`kubectl apply --dry-run=server`).

The release goes into the test's namespace. Cases: the default values (every namespace, a
ClusterRole), one watched namespace (a Role there), and replicas with leader election (a
Role for the Lease) and a chart-made S3 Secret.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from devcluster.build import KUBERNETES_VERSION
from devcluster.testing import DevCluster, Kubectl
from tests.integration.operator_fixtures import REPO

CHART = REPO / "charts" / "agentjobs"


def helm_template(env: dict[str, str], namespace: str, values: list[str]) -> str:
    flags = [arg for value in values for arg in ("--set", value)]
    return subprocess.run(
        ["helm", "template", f"dry-{namespace[-6:]}", str(CHART), "--namespace", namespace,
         "--kube-version", KUBERNETES_VERSION, *flags],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


@pytest.mark.parametrize(
    "values",
    [
        pytest.param([], id="every-namespace"),
        pytest.param(["watchNamespaces={NS}"], id="one-namespace"),
        pytest.param(
            ["replicaCount=3", "s3.endpoint=http://minio:9000", "s3.accessKey=a", "s3.secretKey=b"],
            id="replicas",
        ),
        pytest.param(["replicaCount=2", "watchNamespaces={NS}"], id="replicas-one-namespace"),
    ],
)
def test_the_api_server_accepts_the_rendered_chart(
    local_cluster: DevCluster,
    kubectl: Kubectl,
    crds: None,
    namespace: str,
    tmp_path: Path,
    values: list[str],
) -> None:
    rendered = helm_template(
        local_cluster.env, namespace, [v.replace("NS", namespace) for v in values]
    )
    result = kubectl.run(
        "apply", "--server-side", "--dry-run=server", "--field-manager=chart-test", "-f", "-",
        input=rendered,
    )  # fmt: skip
    applied = [line.split()[0] for line in result.stdout.splitlines()]
    kinds = {name.split("/")[0] for name in applied}
    assert all(line.endswith("(server dry run)") for line in result.stdout.splitlines())
    assert {"deployment.apps", "service"} <= kinds
    namespaced = any(v.startswith("watchNamespaces") for v in values)
    replicas = any(v.startswith("replicaCount") for v in values)
    assert ("role.rbac.authorization.k8s.io" in kinds) == (namespaced or replicas)
    # The operator's own ClusterRole; the -edit and -view ones are aggregated into users' roles.
    cluster_roles = {n for n in applied if n.startswith("clusterrole.rbac.authorization.k8s.io/")}
    release = f"clusterrole.rbac.authorization.k8s.io/dry-{namespace[-6:]}-agentjobs"
    assert {f"{release}-edit", f"{release}-view"} <= cluster_roles
    assert (release in cluster_roles) != namespaced
