"""A local Kubernetes control plane, node and S3 stores for tests and the demo.

Everything runs as processes of ours, built from pinned Go modules or taken from Debian's
packages: the control plane on loopback, and a real kubelet with containerd and runc in
namespaces of its own, so the project tests against real components on a machine without a
container engine.
"""
