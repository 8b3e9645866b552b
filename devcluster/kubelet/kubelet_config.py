"""The real kubelet's configuration: node `REAL_NODE_NAME` on NODE_ADDRESS, where every pod
of the cluster runs, its state under the cluster directory, and its API (logs, exec)
authenticated by the cluster CA and authorised by the API server."""

from __future__ import annotations

from typing import Any

from devcluster.dns import CLUSTER_DOMAIN
from devcluster.kubelet.paths import CGROUP_ROOT, NodePaths
from devcluster.layout import HOST_ADDRESS, NODE_ADDRESS, NODE_PORT, REAL_NODE_NAME, Layout

# The controller manager's node-monitor-grace-period (15 s) assumes it.
NODE_LEASE_DURATION_SECONDS = 10
HEALTHZ_PORT = 10248
KUBECONFIG_CLIENT = "kubelet"
SERVING_CERTIFICATE = "kubelet-serving"
# Eviction by the node's memory and disk would measure this shared machine, not the pods;
# small thresholds keep it for real exhaustion (a pod's own emptyDir sizeLimit still counts).
EVICTION_HARD = {
    "memory.available": "100Mi",
    "nodefs.available": "1%",
    "nodefs.inodesFree": "1%",
    "imagefs.available": "1%",
}


def configuration(layout: Layout, paths: NodePaths) -> dict[str, Any]:
    """A KubeletConfiguration (kubelet.config.k8s.io/v1beta1)."""
    pki = layout.pki
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        # This machine has cgroup v1, which kubelet 1.35 refuses unless told.
        "failCgroupV1": False,
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": f"/{CGROUP_ROOT}",
        "containerRuntimeEndpoint": f"unix://{paths.containerd_socket}",
        "address": NODE_ADDRESS,
        "port": NODE_PORT,
        "readOnlyPort": 0,
        "healthzBindAddress": NODE_ADDRESS,
        "healthzPort": HEALTHZ_PORT,
        "tlsCertFile": str(pki / f"{SERVING_CERTIFICATE}.crt"),
        "tlsPrivateKeyFile": str(pki / f"{SERVING_CERTIFICATE}.key"),
        "authentication": {
            "anonymous": {"enabled": False},
            "x509": {"clientCAFile": str(pki / "ca.crt")},
            "webhook": {"enabled": True},
        },
        "authorization": {"mode": "Webhook"},
        # CoreDNS on the host (devcluster.dns): pods resolve Services by name.
        "clusterDNS": [HOST_ADDRESS],
        "clusterDomain": CLUSTER_DOMAIN,
        "podLogsDir": str(paths.pod_logs),
        "nodeLeaseDurationSeconds": NODE_LEASE_DURATION_SECONDS,
        "failSwapOn": False,
        "evictionHard": EVICTION_HARD,
        # No registry to pull from again: images imported into the node are never collected.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        # Its minimum: log sizes checked every 3 s rather than 10, for rotation to show soon.
        "containerLogMonitorInterval": "3s",
        # emptyDir usage, which a volume's sizeLimit eviction reads, measured every 5 s rather
        # than every minute: an overrun is evicted within seconds, not up to a minute later.
        "volumeStatsAggPeriod": "5s",
    }


def argv(layout: Layout, paths: NodePaths) -> list[str]:
    return [
        f"--config={paths.kubelet_config}",
        f"--kubeconfig={layout.kubeconfig(KUBECONFIG_CLIENT)}",
        f"--root-dir={paths.kubelet_root}",
        f"--hostname-override={REAL_NODE_NAME}",
        f"--node-ip={NODE_ADDRESS}",
    ]
