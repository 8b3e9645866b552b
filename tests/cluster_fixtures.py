"""Fixtures of the local cluster from `devcluster`, for the integration and chaos tests.

The cluster comes up once per session. With AGENTJOBS_REUSE_CLUSTER=1 a running cluster is
used and left running; otherwise the session tears down the cluster it started. A cluster that
was already running when the session began is never torn down, since someone else owns it.
Under pytest-xdist the workers share one cluster: the first to need it starts it (`up` is
serialised), none owns it, and the controller takes it down once every worker is done, if one
of them started it (a cluster someone else started meanwhile is theirs).

Both S3 stores run (versitygw and MinIO, each on its own port). Tests use versitygw unless
marked `@every_s3_store`, which runs them once per store (ids `versitygw` and `minio`): the
`s3_store` fixture names the store, `s3_env` points the cluster's environment at it, and `s3`
is a client of it.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator

import pytest
from minio import Minio

from agentjobs.kube.naming import POD_FINALIZER
from devcluster import cluster, processes
from devcluster.components import APISERVER
from devcluster.layout import default_layout
from devcluster.stores import DEFAULT_S3_STORE, S3_STORES
from devcluster.testing import DevCluster, Kubectl

every_s3_store = pytest.mark.parametrize("s3_store", list(S3_STORES), indirect=True)
# Whether this session's cluster was started by an xdist worker (in the worker; then in the
# controller, any worker), told through ``workeroutput`` under _STARTED_KEY.
_STARTED_BY_A_WORKER = pytest.StashKey[bool]()
_STARTED_KEY = "agentjobs_started_cluster"


def _reused() -> bool:
    return os.environ.get("AGENTJOBS_REUSE_CLUSTER") == "1"


def _running() -> bool:
    return processes.alive(default_layout().pid_file(APISERVER.name)) is not None


def pytest_testnodedown(node: object) -> None:
    """In the controller: a worker is done, and says whether it started the cluster."""
    started = getattr(node, "workeroutput", {}).get(_STARTED_KEY, False)
    if started:
        node.config.stash[_STARTED_BY_A_WORKER] = True  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # a worker: tell the controller
        workeroutput[_STARTED_KEY] = config.stash.get(_STARTED_BY_A_WORKER, False)
    elif config.stash.get(_STARTED_BY_A_WORKER, False) and not _reused() and _running():
        cluster.down(default_layout())


@pytest.fixture(scope="session")
def local_cluster(request: pytest.FixtureRequest) -> Iterator[DevCluster]:
    layout = default_layout()
    already_running = _running()
    cluster.up(layout, s3=S3_STORES)
    worker = "PYTEST_XDIST_WORKER" in os.environ
    owned = not _reused() and not already_running and not worker
    if worker and not already_running:
        request.config.stash[_STARTED_BY_A_WORKER] = True
    env = cluster.environment(layout, DEFAULT_S3_STORE)
    yield DevCluster(layout=layout, env=env, owned=owned)
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
    _let_pods_go(kubectl, name)


def _let_pods_go(kubectl: Kubectl, namespace: str) -> None:
    """Stop the namespace's pods now and take the operator's finalizer off them. The test's
    operator has stopped by now: a harvester it had not told to stop would wait out its
    hour's grace for credentials, and a pod it had not let go would keep its finalizer for
    ever; in a long session they filled the node's 110 pods and later pods could not be
    scheduled."""
    kubectl.run(
        "delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force", "--wait=false",
        check=False,
    )  # fmt: skip
    for pod in kubectl.json("get", "pods", "-n", namespace)["items"]:
        finalizers = pod["metadata"].get("finalizers") or []
        if POD_FINALIZER in finalizers:
            kept = [f for f in finalizers if f != POD_FINALIZER]
            patch = json.dumps({"metadata": {"finalizers": kept or None}})
            kubectl.run(
                "patch", "pod", pod["metadata"]["name"], "-n", namespace, "--type=merge",
                "-p", patch, check=False,  # gone meanwhile
            )  # fmt: skip


@pytest.fixture
def s3_store(request: pytest.FixtureRequest) -> str:
    """The S3 store a test uses: versitygw, or each one in turn under `@every_s3_store`."""
    store: str = getattr(request, "param", DEFAULT_S3_STORE)
    return store


@pytest.fixture
def s3_env(local_cluster: DevCluster, s3_store: str) -> dict[str, str]:
    """The cluster's environment with AGENTJOBS_S3_* pointing at the test's store."""
    return local_cluster.s3_env(s3_store)


@pytest.fixture
def s3(s3_env: dict[str, str]) -> Minio:
    """A client of the test's S3 store, as its root user."""
    return Minio(
        s3_env["AGENTJOBS_S3_ENDPOINT"].removeprefix("http://"),
        access_key=s3_env["AGENTJOBS_S3_ACCESS_KEY"],
        secret_key=s3_env["AGENTJOBS_S3_SECRET_KEY"],
        secure=False,
    )
