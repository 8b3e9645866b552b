"""Where a cluster keeps its state, and the fixed addresses its processes listen on."""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from devcluster.build import CACHE_DIR

REPO_ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
# The first address of the service range, which the `kubernetes` Service takes.
KUBERNETES_SERVICE_IP = "10.0.0.1"
# The real node (devcluster.kubelet) is a network namespace of ours, joined to the host by a
# veth pair: the host's end is HOST_LINK with HOST_ADDRESS, the node's NODE_ADDRESS. What pods
# must reach (the API server, the S3 stores) listens on HOST_ADDRESS, since a pod's loopback is
# its own; host processes reach it as well.
HOST_LINK = "agentjobs0"
HOST_ADDRESS = "10.87.0.1"
NODE_ADDRESS = "10.87.0.2"
NODE_NETWORK_PREFIX = 24
REAL_NODE_NAME = "devkubelet"
# Pod addresses on the real node's bridge, inside its network namespace.
POD_SUBNET = "10.88.0.0/24"

ETCD_CLIENT_PORT = 23790
ETCD_PEER_PORT = 23800
APISERVER_PORT = 6443
CONTROLLER_MANAGER_PORT = 10257
SCHEDULER_PORT = 10259
NODE_PORT = 10250
S3_PORT = 9000
# MinIO, the second S3 store, beside versitygw so that both can run at once.
MINIO_PORT = 9010
MINIO_CONSOLE_PORT = 9011
# The simulated (kwok) nodes' kubelet endpoint, served by devcluster.kwok_logs, and kwok's own
# server behind it.
KWOK_NODE_PORT = 10350
KWOK_SERVER_PORT = 10351

APISERVER_URL = f"https://{HOST_ADDRESS}:{APISERVER_PORT}"
S3_ENDPOINT = f"http://{HOST_ADDRESS}:{S3_PORT}"
MINIO_ENDPOINT = f"http://{HOST_ADDRESS}:{MINIO_PORT}"


@dataclass(frozen=True)
class Layout:
    """The files of one cluster under its state directory."""

    root: Path

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def etcd_data(self) -> Path:
        return self.root / "etcd"

    @property
    def s3_data(self) -> Path:
        return self.root / "s3"

    @property
    def s3_metadata(self) -> Path:
        return self.root / "s3-metadata"

    @property
    def minio_data(self) -> Path:
        return self.root / "minio"

    @property
    def s3_stores_file(self) -> Path:
        """The S3 stores `up` was asked for, so that status and env know which to expect."""
        return self.root / "s3-stores.json"

    @property
    def kwok(self) -> Path:
        """The simulated nodes' configuration and the agent log their pods serve."""
        return self.root / "kwok"

    @property
    def real_node(self) -> Path:
        """The real node's namespaces, configuration and state (devcluster.kubelet)."""
        return self.root / "realnode"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.root / "admin.kubeconfig"

    def kubeconfig(self, client: str) -> Path:
        return self.root / f"{client}.kubeconfig"

    def pid_file(self, component: str) -> Path:
        return self.root / "run" / f"{component}.pid"

    def log_file(self, component: str) -> Path:
        return self.logs / f"{component}.log"


def default_layout() -> Layout:
    """The cluster in $AGENTJOBS_CLUSTER_DIR, or ~/.cache/agentjobs/cluster."""
    configured = os.environ.get("AGENTJOBS_CLUSTER_DIR")
    root = Path(configured) if configured else CACHE_DIR / "cluster"
    return Layout(root.expanduser().resolve())


@dataclass(frozen=True)
class S3Credentials:
    access_key: str
    secret_key: str


def s3_credentials(layout: Layout) -> S3Credentials:
    """The S3 root user's keys (every store's), made on first use, kept in the state directory."""
    path = layout.root / "s3-credentials.json"
    if not path.exists():
        layout.root.mkdir(parents=True, exist_ok=True)
        generated = {"access_key": secrets.token_hex(10), "secret_key": secrets.token_hex(20)}
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(generated, file)
    data = json.loads(path.read_text())
    return S3Credentials(access_key=data["access_key"], secret_key=data["secret_key"])
