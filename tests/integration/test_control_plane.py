"""The control plane and the S3 stores behave like the real thing, observed through kubectl."""

from __future__ import annotations

import io
import ipaddress
import secrets
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from minio import Minio

from devcluster import cluster, processes
from devcluster.components import ALL
from devcluster.layout import APISERVER_URL, KUBERNETES_SERVICE_IP
from devcluster.stores import S3_STORES
from devcluster.testing import DevCluster, Kubectl
from tests.cluster_fixtures import every_s3_store
from tests.integration.images import BUSYBOX

# Alone on the cluster (make test's second lane): it takes the cluster down and up.
pytestmark = pytest.mark.exclusive


def _wait_for(description: str, condition: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {description}"
        time.sleep(0.25)


def test_kubectl_and_server_report_the_pinned_version(kubectl: Kubectl) -> None:
    versions = kubectl.json("version")

    assert versions["clientVersion"]["gitVersion"] == "v1.35.4"
    assert versions["serverVersion"]["gitVersion"] == "v1.35.4"


def test_apiserver_certificate_names_the_in_cluster_service(local_cluster: DevCluster) -> None:
    pem = (local_cluster.layout.pki / "apiserver.crt").read_bytes()
    names = (
        x509.load_pem_x509_certificate(pem)
        .extensions.get_extension_for_class(x509.SubjectAlternativeName)
        .value
    )

    assert "kubernetes.default.svc.cluster.local" in names.get_values_for_type(x509.DNSName)
    assert ipaddress.ip_address(KUBERNETES_SERVICE_IP) in names.get_values_for_type(x509.IPAddress)


def test_deleting_an_owner_garbage_collects_its_dependents(
    kubectl: Kubectl, namespace: str
) -> None:
    kubectl.run("create", "configmap", "owner", "-n", namespace)
    owner_uid = kubectl.json("get", "configmap", "owner", "-n", namespace)["metadata"]["uid"]
    dependent = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "dependent",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner_uid}
            ],
        },
        "data": {"key": "value"},
    }
    kubectl.apply(dependent, namespace)

    kubectl.run("delete", "configmap", "owner", "-n", namespace)

    _wait_for(
        "the dependent config map to be collected",
        lambda: (
            kubectl.run("get", "configmap", "dependent", "-n", namespace, check=False).returncode
            != 0
        ),
    )


def _token_kubeconfig(local_cluster: DevCluster, token: str, directory: Path) -> Path:
    """A kubeconfig that authenticates with a bearer token only, no client certificate."""
    cluster_entry = {
        "server": APISERVER_URL,
        "certificate-authority": str(local_cluster.layout.pki / "ca.crt"),
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster_entry}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path = directory / "token.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_rbac_denies_a_service_account_what_its_role_does_not_grant(
    kubectl: Kubectl, namespace: str, local_cluster: DevCluster, tmp_path: Path
) -> None:
    kubectl.run("create", "serviceaccount", "reader", "-n", namespace)
    kubectl.run(
        "create", "role", "read-config", "--verb=get,list", "--resource=configmaps", "-n", namespace
    )
    kubectl.run(
        "create",
        "rolebinding",
        "reader-reads-config",
        "--role=read-config",
        f"--serviceaccount={namespace}:reader",
        "-n",
        namespace,
    )
    subject = f"--as=system:serviceaccount:{namespace}:reader"

    def can_i(verb: str, resource: str) -> str:
        result = kubectl.run("auth", "can-i", verb, resource, subject, "-n", namespace, check=False)
        return result.stdout.strip()

    assert can_i("list", "configmaps") == "yes"
    assert can_i("create", "configmaps") == "no"
    assert can_i("list", "secrets") == "no"

    token = kubectl.run("create", "token", "reader", "-n", namespace).stdout.strip()
    as_reader = kubectl.with_kubeconfig(_token_kubeconfig(local_cluster, token, tmp_path))
    allowed = as_reader.run("get", "configmaps", "-n", namespace, check=False)
    denied = as_reader.run("get", "secrets", "-n", namespace, check=False)

    assert allowed.returncode == 0, allowed.stderr
    assert denied.returncode != 0
    assert "Forbidden" in denied.stderr
    assert f"system:serviceaccount:{namespace}:reader" in denied.stderr


@every_s3_store
def test_s3_object_reads_back_identical(s3: Minio) -> None:
    bucket = f"round-trip-{uuid.uuid4().hex[:8]}"
    payload = secrets.token_bytes(3 * 1024 * 1024 + 17)
    s3.make_bucket(bucket)
    try:
        s3.put_object(bucket, "dir/object.bin", io.BytesIO(payload), len(payload))
        response = s3.get_object(bucket, "dir/object.bin")
        try:
            read_back = response.read()
        finally:
            response.close()
            response.release_conn()
        assert read_back == payload
        assert s3.stat_object(bucket, "dir/object.bin").size == len(payload)
    finally:
        s3.remove_object(bucket, "dir/object.bin")
        s3.remove_bucket(bucket)


def test_a_batch_job_runs_to_complete(
    kubectl: Kubectl, namespace: str, local_cluster: DevCluster
) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hello"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "echo hi"]}
                    ],
                }
            },
        },
    }
    kubectl.apply(job, namespace)

    kubectl.run(
        "wait",
        "--for=condition=Complete",
        "job/hello",
        "-n",
        namespace,
        "--timeout=120s",
        timeout=150,
    )
    status = kubectl.json("get", "job", "hello", "-n", namespace)["status"]
    assert status["succeeded"] == 1


def test_down_leaves_no_process_and_no_listening_port(local_cluster: DevCluster) -> None:
    if not local_cluster.owned:
        pytest.skip("the cluster belongs to someone else; only its owner may take it down")
    marker = str(local_cluster.layout.root)
    ports = {port for component in ALL for port in component.ports}

    cluster.down(local_cluster.layout)
    try:
        assert processes.marked_processes(marker) == []
        assert processes.listening_ports(ports) == set()
        for component in ALL:
            assert processes.alive(local_cluster.layout.pid_file(component.name)) is None
    finally:
        cluster.up(local_cluster.layout, s3=S3_STORES)
