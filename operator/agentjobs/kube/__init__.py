"""Pure Kubernetes shapes: the phase pod, pod states, names, ownership, conditions, leases."""
