"""The chart installed for real: `helm install` with the image built from our Dockerfile, and
the operator, a pod on the real node under the chart's ServiceAccount and RBAC, takes an
Execution with storage to `completed`; the console (R72), a pod beside it, turns away a request
without a token (401) and shows a tenant its namespace's Executions and not another's (403).

The release watches only the test's namespace and leaves the CRDs to the session (the
shared cluster's CRDs are installed once; crds.install would make this release own them).
Its phase pods reach the operator through the chart's Service, by its DNS name.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from minio import Minio

from devcluster.layout import REAL_NODE_NAME
from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import AGENT_IMAGE
from tests.integration.operator_fixtures import REPO, wait_finished
from tests.integration.stored import stored_objects

CHART = REPO / "charts" / "agentjobs"


@pytest.fixture
def release(
    local_cluster: DevCluster, crds: None, namespace: str, s3_env: dict[str, str]
) -> Iterator[str]:
    name = f"op-{namespace[-6:]}"
    values = {
        "watchNamespaces": [namespace],
        "crds": {"install": False},
        "image": {"pullPolicy": "Never"},
        "console": {"enabled": True},
        "s3": {
            "endpoint": s3_env["AGENTJOBS_S3_ENDPOINT"],
            "accessKey": s3_env["AGENTJOBS_S3_ACCESS_KEY"],
            "secretKey": s3_env["AGENTJOBS_S3_SECRET_KEY"],
        },
    }
    helm = ["helm", "--namespace", namespace]
    subprocess.run(
        [*helm, "install", name, str(CHART), "--values", "-", "--wait", "--timeout", "180s"],
        input=json.dumps(values), env=local_cluster.env, text=True, check=True,
    )  # fmt: skip
    yield name
    subprocess.run([*helm, "uninstall", name, "--wait"], env=local_cluster.env, check=False)


def test_the_installed_operator_completes_an_execution_with_storage(
    kubectl: Kubectl, namespace: str, release: str, s3: Minio
) -> None:
    [operator] = kubectl.json(
        "get", "pods", "-n", namespace, "-l", "app.kubernetes.io/component=operator"
    )["items"]
    assert operator["spec"]["nodeName"] == REAL_NODE_NAME
    assert operator["spec"]["serviceAccountName"].startswith(release)
    script = (
        'echo delivered > "$AGENTJOBS_OUTPUT_DIR/result.txt"; '
        "echo 'TASK_RESULT: {\"success\": true}'; echo TASK_RESULT_END"
    )
    manifest = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "installed"},
        "spec": {
            "phases": [
                {
                    "name": "write",
                    "prompt": "Write it.",
                    "image": AGENT_IMAGE,
                    "command": ["sh", "-c", script],
                }
            ]
        },
    }
    kubectl.apply(manifest, namespace)
    status = wait_finished(kubectl, namespace, "installed", timeout=180)
    assert status["status"] == "completed", json.dumps(status)
    key = f"namespaces/{namespace}/executions/installed/0-write/attempt-1/output/result.txt"
    assert stored_objects(s3, key) == {key: b"delivered\n"}


def test_the_installed_console_shows_a_tenant_its_namespace_only(
    kubectl: Kubectl, namespace: str, release: str, tenant: Kubectl
) -> None:
    [console] = kubectl.json(
        "get", "pods", "-n", namespace, "-l", "app.kubernetes.io/component=console"
    )["items"]
    assert console["spec"]["serviceAccountName"] == f"{release}-agentjobs-console"
    base = f"http://{console['status']['podIP']}:8080"
    token = kubectl.run("create", "token", "tenant", "-n", namespace).stdout.strip()

    def status(path: str, bearer: str | None) -> int:
        request = urllib.request.Request(base + path)
        if bearer:
            request.add_header("Authorization", f"Bearer {bearer}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return error.code

    assert status(f"/executions?namespace={namespace}", None) == 401
    assert status(f"/executions?namespace={namespace}", token) == 200
    assert status("/executions?namespace=kube-system", token) == 403
