"""Where the real node keeps its namespaces, configuration and state, all under the cluster's
state directory (Layout.real_node)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from devcluster.layout import Layout

# The node's own cgroup under every hierarchy (/sys/fs/cgroup/<controller>/<this>): the
# kubelet's cgroupRoot, so its pods' cgroups are ours to find and remove.
CGROUP_ROOT = "agentjobs-devkubelet"


@dataclass(frozen=True)
class NodePaths:
    root: Path

    @classmethod
    def of(cls, layout: Layout) -> NodePaths:
        return cls(layout.real_node)

    @property
    def namespaces(self) -> Path:
        """A private mount of its own, holding the namespace files (a mount namespace file
        may not sit on a shared mount)."""
        return self.root / "ns"

    @property
    def net_ns(self) -> Path:
        return self.namespaces / "net"

    @property
    def mount_ns(self) -> Path:
        return self.namespaces / "mnt"

    # Mounted over /run, /var/lib and /var/log inside the node's mount namespace, so that the
    # fixed paths the kubelet, containerd's shims and the CNI plugins use land here.
    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def var_lib(self) -> Path:
        return self.root / "var-lib"

    @property
    def var_log(self) -> Path:
        return self.root / "var-log"

    @property
    def sysctls(self) -> Path:
        """Files mounted over the host-wide sysctls the kubelet sets."""
        return self.root / "sysctl"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def kubelet_root(self) -> Path:
        """The kubelet's --root-dir: /var/lib/kubelet inside the node, this path outside."""
        return self.var_lib / "kubelet"

    @property
    def pod_logs(self) -> Path:
        return self.var_log / "pods"

    @property
    def containerd_root(self) -> Path:
        return self.root / "containerd"

    @property
    def containerd_state(self) -> Path:
        return self.run / "containerd"

    @property
    def containerd_socket(self) -> Path:
        return self.root / "containerd.sock"

    @property
    def containerd_config(self) -> Path:
        return self.root / "containerd.toml"

    @property
    def cni_config_dir(self) -> Path:
        return self.root / "cni"

    @property
    def kubelet_config(self) -> Path:
        return self.root / "kubelet.yaml"

    @property
    def kube_proxy_config(self) -> Path:
        return self.root / "kube-proxy.yaml"
