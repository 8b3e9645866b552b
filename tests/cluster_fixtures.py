"""Fixtures of the local cluster from `devcluster`, for the integration and chaos tests.

The cluster comes up once per session. With AGENTJOBS_REUSE_CLUSTER=1 a running cluster is
used and left running; otherwise the session tears down the cluster it started. A cluster that
was already running when the session began is never torn down, since someone else owns it.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Iterator

import pytest
from minio import Minio

from devcluster import cluster, processes
from devcluster.components import APISERVER
from devcluster.layout import S3_ENDPOINT, default_layout
from devcluster.testing import DevCluster, Kubectl


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[DevCluster]:
    layout = default_layout()
    reuse = os.environ.get("AGENTJOBS_REUSE_CLUSTER") == "1"
    already_running = processes.alive(layout.pid_file(APISERVER.name)) is not None
    cluster.up(layout)
    owned = not reuse and not already_running
    yield DevCluster(layout=layout, env=cluster.environment(layout), owned=owned)
    if owned:
        cluster.down(layout)


@pytest.fixture(scope="session")
def kubectl(local_cluster: DevCluster) -> Kubectl:
    return Kubectl(local_cluster.env)


def _namespace_name(test_name: str) -> str:
    readable = re.sub(r"[^a-z0-9-]+", "-", test_name.lower()).strip("-")[:40].rstrip("-")
    return f"{readable}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def namespace(kubectl: Kubectl, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace, with its default service account in place, deleted afterwards."""
    name = _namespace_name(request.node.name)
    kubectl.run("create", "namespace", name)
    deadline = time.monotonic() + 30
    while kubectl.run("get", "serviceaccount", "default", "-n", name, check=False).returncode:
        assert time.monotonic() < deadline, f"no default service account in {name}"
        time.sleep(0.2)
    yield name
    kubectl.run("delete", "namespace", name, "--wait=false")


@pytest.fixture(scope="session")
def s3(local_cluster: DevCluster) -> Minio:
    """A client of the local S3 store, as its root user."""
    return Minio(
        S3_ENDPOINT.removeprefix("http://"),
        access_key=local_cluster.env["AGENTJOBS_S3_ACCESS_KEY"],
        secret_key=local_cluster.env["AGENTJOBS_S3_SECRET_KEY"],
        secure=False,
    )
