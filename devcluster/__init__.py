"""A local Kubernetes control plane, process node and S3 store for tests and the demo.

Everything runs as ordinary processes on loopback, built from pinned Go modules, so the
project can test against a real API server on machines without a container engine.
"""
