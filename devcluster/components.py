"""The cluster's processes: how each one is started and how to tell that it is healthy."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from devcluster.build import binary_path
from devcluster.layout import (
    APISERVER_PORT,
    APISERVER_URL,
    CONTROLLER_MANAGER_PORT,
    ETCD_CLIENT_PORT,
    ETCD_PEER_PORT,
    HOST_ADDRESS,
    KUBERNETES_SERVICE_IP,
    LOOPBACK,
    MINIO_CONSOLE_PORT,
    MINIO_PORT,
    NODE_ADDRESS,
    REAL_NODE_NAME,
    S3_PORT,
    SCHEDULER_PORT,
    SERVICE_CLUSTER_IP_RANGE,
    Layout,
    s3_credentials,
)
from devcluster.pki import Leaf
from devcluster.probes import admin_tls, http_status, unverified_tls

SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
S3_HEALTH_PATH = "/health"
# Ready, unlike live, only once the drive is formatted and requests are served.
MINIO_READY_PATH = "/minio/health/ready"
NODE_MONITOR_GRACE_SECONDS = 15
# Client-side rate limits of the controller manager's (per controller) and the scheduler's
# API clients. Their defaults (20 and 50 requests/s) cap a thousand Jobs at some 200 a minute
# and the binding of a thousand pods at some 40 s: at benchmarks/scale.py's sizes that
# measures these limits, not the Job controller or the operator.
CONTROL_PLANE_CLIENT_QPS = 500
CONTROL_PLANE_CLIENT_BURST = 1000
# Controllers the tests and the operator rely on. The node lifecycle controller marks a node
# that stops heartbeating Ready=Unknown and taints it NoExecute; the taint eviction controller
# then deletes the pods that no longer tolerate that (by default after 300 s, the admission
# plugin's toleration; a node-loss test tolerates it for seconds).
CONTROLLERS = (
    "taint-eviction-controller",
    "node-lifecycle-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    # Fills the built-in admin, edit and view roles from the roles aggregated into them.
    "clusterrole-aggregation-controller",
    "job-controller",
    "replicaset-controller",
    "deployment-controller",
    "ttl-after-finished-controller",
    "pod-garbage-collector-controller",
    # Counts usage into each ResourceQuota's status: quota admission enforces nothing without it.
    "resourcequota-controller",
    # Publishes kube-root-ca.crt into every namespace; projected token volumes need it.
    "root-ca-certificate-publisher-controller",
    # Fills each Service's EndpointSlices, which kube-proxy routes ClusterIPs by and CoreDNS
    # answers from (the `kubernetes` Service's alone are written by the API server).
    "endpointslice-controller",
)

LEAVES = (
    Leaf(
        "apiserver",
        "kube-apiserver",
        server=True,
        dns_names=(
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ),
        ip_addresses=(LOOPBACK, HOST_ADDRESS, KUBERNETES_SERVICE_IP),
    ),
    Leaf("admin", "admin", "system:masters"),
    Leaf("controller-manager", "system:kube-controller-manager"),
    Leaf("scheduler", "system:kube-scheduler"),
    Leaf("apiserver-kubelet-client", "kube-apiserver-kubelet-client", "system:masters"),
    # The simulated nodes' log endpoint (devcluster.kwok_logs), on loopback.
    Leaf(
        "kwok-serving",
        "kwok-logs",
        server=True,
        dns_names=("localhost",),
        ip_addresses=(LOOPBACK,),
    ),
    # The node (devcluster.kubelet): the kubelet's client and serving certificates, and
    # kube-proxy's client, the user the built-in system:node-proxier role is bound to.
    Leaf("kubelet", f"system:node:{REAL_NODE_NAME}", "system:nodes"),
    Leaf(
        "kubelet-serving",
        f"system:node:{REAL_NODE_NAME}",
        "system:nodes",
        server=True,
        dns_names=(REAL_NODE_NAME,),
        ip_addresses=(NODE_ADDRESS,),
    ),
    Leaf("kube-proxy", "system:kube-proxy"),
    # Cluster DNS (devcluster.dns), bound to a read-only role of its own.
    Leaf("coredns", "system:coredns"),
)
# Kubeconfig files written next to the state directory, by the client certificate they use.
KUBECONFIG_CLIENTS = (
    "admin", "controller-manager", "scheduler", "kubelet", "kube-proxy", "coredns"
)  # fmt: skip


def _no_environment(layout: Layout) -> Mapping[str, str]:
    return {}


@dataclass(frozen=True)
class Component:
    name: str
    ports: tuple[int, ...]
    argv: Callable[[Layout], list[str]]
    healthy: Callable[[Layout], bool]
    # How long the process may take to shut down on SIGTERM before it is killed.
    grace_seconds: float = 10.0
    # Settings the process takes only from its environment.
    environment: Callable[[Layout], Mapping[str, str]] = _no_environment


def _etcd(layout: Layout) -> list[str]:
    client_url = f"http://{LOOPBACK}:{ETCD_CLIENT_PORT}"
    peer_url = f"http://{LOOPBACK}:{ETCD_PEER_PORT}"
    return [
        str(binary_path("etcd")),
        "--name=devcluster",
        f"--data-dir={layout.etcd_data}",
        f"--listen-client-urls={client_url}",
        f"--advertise-client-urls={client_url}",
        f"--listen-peer-urls={peer_url}",
        f"--initial-advertise-peer-urls={peer_url}",
        f"--initial-cluster=devcluster={peer_url}",
        # A throwaway test cluster: skipping fsync makes every API write much faster.
        "--unsafe-no-fsync",
    ]


def _etcd_healthy(layout: Layout) -> bool:
    return http_status(f"http://{LOOPBACK}:{ETCD_CLIENT_PORT}/health") == 200


def _apiserver(layout: Layout) -> list[str]:
    pki = layout.pki
    return [
        str(binary_path("kube-apiserver")),
        f"--etcd-servers=http://{LOOPBACK}:{ETCD_CLIENT_PORT}",
        # The host's end of the real node's link, so that pods reach it.
        f"--bind-address={HOST_ADDRESS}",
        f"--advertise-address={HOST_ADDRESS}",
        f"--secure-port={APISERVER_PORT}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction",
        # The node is Ready when it registers: no not-ready taint to wait for at every start.
        "--disable-admission-plugins=TaintNodesByCondition",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--service-account-key-file={pki / 'service-account.pub'}",
        f"--service-account-signing-key-file={pki / 'service-account.key'}",
        f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
        f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
        f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP",
        "--allow-privileged=true",
        "--profiling=false",
        # MutatingAdmissionPolicy (beta): tests hold pods with a scheduling gate, as Kueue does.
        "--feature-gates=MutatingAdmissionPolicy=true",
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
    ]


def _apiserver_environment(layout: Layout) -> Mapping[str, str]:
    # A test cluster on two cores: at a thousand phases the API server held one core, a
    # quarter of it in its garbage collector. Collecting at 5x the live heap rather than 2x
    # trades memory (3.4 GB at its peak instead of 0.9) for that CPU, as etcd's skipped
    # fsync trades durability.
    return {"GOGC": "400"}


def _apiserver_healthy(layout: Layout) -> bool:
    return http_status(f"{APISERVER_URL}/readyz", admin_tls(layout)) == 200


def _controller_manager(layout: Layout) -> list[str]:
    kubeconfig = layout.kubeconfig("controller-manager")
    return [
        str(binary_path("kube-controller-manager")),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={CONTROLLER_MANAGER_PORT}",
        f"--controllers={','.join(CONTROLLERS)}",
        "--use-service-account-credentials=true",
        f"--service-account-private-key-file={layout.pki / 'service-account.key'}",
        f"--root-ca-file={layout.pki / 'ca.crt'}",
        # One instance only: waiting for a lease would just slow every start down.
        "--leader-elect=false",
        # A node that stops heartbeating is Ready=Unknown within ~16 s, not the default 50 s;
        # the node renews its lease every 2.5 s (NODE_LEASE_DURATION_SECONDS / 4).
        f"--node-monitor-grace-period={NODE_MONITOR_GRACE_SECONDS}s",
        "--node-monitor-period=1s",
        f"--kube-api-qps={CONTROL_PLANE_CLIENT_QPS}",
        f"--kube-api-burst={CONTROL_PLANE_CLIENT_BURST}",
    ]


def _controller_manager_healthy(layout: Layout) -> bool:
    url = f"https://{LOOPBACK}:{CONTROLLER_MANAGER_PORT}/healthz"
    return http_status(url, unverified_tls()) == 200


def _scheduler(layout: Layout) -> list[str]:
    kubeconfig = layout.kubeconfig("scheduler")
    return [
        str(binary_path("kube-scheduler")),
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={SCHEDULER_PORT}",
        "--leader-elect=false",
        f"--kube-api-qps={CONTROL_PLANE_CLIENT_QPS}",
        f"--kube-api-burst={CONTROL_PLANE_CLIENT_BURST}",
    ]


def _scheduler_healthy(layout: Layout) -> bool:
    return http_status(f"https://{LOOPBACK}:{SCHEDULER_PORT}/healthz", unverified_tls()) == 200


def _supports_user_xattrs(directory: Path) -> bool:
    probe = directory / ".xattr-probe"
    probe.touch()
    try:
        os.setxattr(probe, "user.agentjobs", b"1")
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


def _versitygw(layout: Layout) -> list[str]:
    credentials = s3_credentials(layout)
    layout.s3_data.mkdir(parents=True, exist_ok=True)
    backend = ["posix"]
    # The posix backend keeps object metadata in extended attributes; where the filesystem
    # has none, a sidecar directory holds it instead.
    if not _supports_user_xattrs(layout.s3_data):
        layout.s3_metadata.mkdir(parents=True, exist_ok=True)
        backend.append(f"--sidecar={layout.s3_metadata}")
    return [
        str(binary_path("versitygw")),
        f"--access={credentials.access_key}",
        f"--secret={credentials.secret_key}",
        f"--port={HOST_ADDRESS}:{S3_PORT}",
        f"--health={S3_HEALTH_PATH}",
        *backend,
        str(layout.s3_data),
    ]


def _versitygw_healthy(layout: Layout) -> bool:
    return http_status(f"http://{HOST_ADDRESS}:{S3_PORT}{S3_HEALTH_PATH}") == 200


def _minio(layout: Layout) -> list[str]:
    layout.minio_data.mkdir(parents=True, exist_ok=True)
    return [
        str(binary_path("minio")),
        "server",
        f"--address={HOST_ADDRESS}:{MINIO_PORT}",
        # Its console is off (MINIO_BROWSER); the address keeps it off MinIO's default port.
        f"--console-address={LOOPBACK}:{MINIO_CONSOLE_PORT}",
        str(layout.minio_data),
    ]


def _minio_environment(layout: Layout) -> Mapping[str, str]:
    credentials = s3_credentials(layout)
    return {
        "MINIO_ROOT_USER": credentials.access_key,
        "MINIO_ROOT_PASSWORD": credentials.secret_key,
        "MINIO_BROWSER": "off",
        # No update check: the machine reaches no network, and this build is never updated.
        "MINIO_UPDATE": "off",
    }


def _minio_healthy(layout: Layout) -> bool:
    return http_status(f"http://{HOST_ADDRESS}:{MINIO_PORT}{MINIO_READY_PATH}") == 200


ETCD = Component("etcd", (ETCD_CLIENT_PORT, ETCD_PEER_PORT), _etcd, _etcd_healthy)
APISERVER = Component(
    "kube-apiserver",
    (APISERVER_PORT,),
    _apiserver,
    _apiserver_healthy,
    environment=_apiserver_environment,
)
CONTROLLER_MANAGER = Component(
    "kube-controller-manager",
    (CONTROLLER_MANAGER_PORT,),
    _controller_manager,
    _controller_manager_healthy,
)
SCHEDULER = Component("kube-scheduler", (SCHEDULER_PORT,), _scheduler, _scheduler_healthy)
S3 = Component("versitygw", (S3_PORT,), _versitygw, _versitygw_healthy)
MINIO = Component(
    "minio",
    (MINIO_PORT, MINIO_CONSOLE_PORT),
    _minio,
    _minio_healthy,
    environment=_minio_environment,
)

# In start order; they stop in reverse.
ALL = (ETCD, APISERVER, CONTROLLER_MANAGER, SCHEDULER, S3, MINIO)
