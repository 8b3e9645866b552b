"""The real node: containerd, runc and a kubelet (node `devkubelet`) with kube-proxy, in a
network and a mount namespace of ours, all their state under the cluster directory."""
