"""Pod IPs on a node without network namespaces.

Every pod gets its own loopback address (all of 127.0.0.0/8 reaches `lo`), so that
servers in concurrent pods that bind their pod IP (from the downward API) and the
kubelet's probes of them do not collide, as they would not in pods of their own
network namespace. A hostNetwork pod's IP is the node's, as with the kubelet.
"""

from __future__ import annotations

import hashlib
from typing import Any


def pod_ip(pod: dict[str, Any], host_ip: str) -> str:
    """A stable address for the pod: 127.a.b.c from its uid, never in 127.0.0.0/24."""
    if pod.get("spec", {}).get("hostNetwork"):
        return host_ip
    digest = hashlib.sha256(str(pod["metadata"]["uid"]).encode()).digest()
    return f"127.{1 + digest[0] % 254}.{digest[1]}.{1 + digest[2] % 254}"
