"""Cluster DNS: CoreDNS with its kubernetes plugin, as on any cluster, so that pods on the real
node resolve Services by name (the chart's phase pods reach the operator's credentials
endpoint at `<release>.<namespace>.svc`).

It runs on the host, on the node link's host address, and reads Services and EndpointSlices
from the API server as `system:coredns`, with the read-only role CoreDNS's own deployment
manifests give it. It answers cluster names only: pods here reach nothing outside the machine.
"""

from __future__ import annotations

import subprocess

from devcluster.build import binary_path
from devcluster.components import Component
from devcluster.layout import HOST_ADDRESS, Layout
from devcluster.probes import http_status

CLUSTER_DOMAIN = "cluster.local"
DNS_PORT = 53
# The ready plugin's port: 200 once the kubernetes plugin has synced with the API server.
READY_PORT = 8181
# Its client certificate (devcluster.components.LEAVES) and kubeconfig.
CLIENT = "coredns"

_ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: system:coredns
"""


def corefile(layout: Layout) -> str:
    return f"""\
{CLUSTER_DOMAIN}:{DNS_PORT} in-addr.arpa:{DNS_PORT} ip6.arpa:{DNS_PORT} {{
    bind {HOST_ADDRESS}
    errors
    ready {HOST_ADDRESS}:{READY_PORT}
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        kubeconfig {layout.kubeconfig(CLIENT)}
        pods insecure
    }}
    cache 5
}}
"""


def _argv(layout: Layout) -> list[str]:
    path = layout.root / "Corefile"
    path.write_text(corefile(layout))
    return [str(binary_path("coredns")), "-conf", str(path)]


def _healthy(layout: Layout) -> bool:
    return http_status(f"http://{HOST_ADDRESS}:{READY_PORT}/ready") == 200


def grant_reads(layout: Layout) -> None:
    """The role CoreDNS reads with; applied before it starts, so it syncs at once."""
    subprocess.run(
        [str(layout.bin / "kubectl"), "apply", "--server-side", "-f", "-"],
        input=_ROLE,
        text=True,
        env={"KUBECONFIG": str(layout.admin_kubeconfig)},
        capture_output=True,
        check=True,
    )


# Listens on HOST_ADDRESS; `ports` are the loopback ones a stray would hold, so none.
DNS = Component("coredns", (), _argv, _healthy)
