"""kube-proxy in iptables mode, inside the node's network namespace only: it makes the
Services' ClusterIPs work from pods, the `kubernetes` Service's among them (in-cluster
clients dial KUBERNETES_SERVICE_HOST), whose endpoint is the API server on HOST_ADDRESS."""

from __future__ import annotations

from typing import Any

from devcluster.kubelet.paths import NodePaths
from devcluster.layout import NODE_ADDRESS, POD_SUBNET, REAL_NODE_NAME, Layout

KUBECONFIG_CLIENT = "kube-proxy"
HEALTHZ_PORT = 10256
METRICS_PORT = 10249


def configuration(layout: Layout, paths: NodePaths) -> dict[str, Any]:
    """A KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1)."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(layout.kubeconfig(KUBECONFIG_CLIENT))},
        "mode": "iptables",
        "hostnameOverride": REAL_NODE_NAME,
        "bindAddress": NODE_ADDRESS,
        "healthzBindAddress": f"{NODE_ADDRESS}:{HEALTHZ_PORT}",
        "metricsBindAddress": f"{NODE_ADDRESS}:{METRICS_PORT}",
        "clusterCIDR": POD_SUBNET,
        # Zero leaves each conntrack setting as it is: nf_conntrack_max is the host's.
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
        # Node ports on the node's address only: on 127.0.0.1 they would need route_localnet.
        "nodePortAddresses": ["primary"],
        "iptables": {"localhostNodePorts": False},
    }


def argv(paths: NodePaths) -> list[str]:
    return [f"--config={paths.kube_proxy_config}"]
