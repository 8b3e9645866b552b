"""The real node's network: a network namespace of ours, kept by a bind-mounted file under the
cluster directory (never /var/run/netns), joined to the host by the veth pair HOST_LINK
(HOST_ADDRESS) <-> NODE_LINK (NODE_ADDRESS).

Nothing else changes on the host but one route, on HOST_LINK itself: the pod subnet, via the
node, so that the operator on the host reaches its pods as it would in a cluster (it tells a
timekeeper its agent's stop over the pod network); it goes with the link. No sysctl, no
iptables rule. Pods' traffic to the host leaves the node masqueraded as NODE_ADDRESS (the
bridge plugin's ipMasq).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from devcluster.kubelet.mounts import mounted, private_directory, run
from devcluster.kubelet.paths import NodePaths
from devcluster.layout import (
    HOST_ADDRESS,
    HOST_LINK,
    NODE_ADDRESS,
    NODE_NETWORK_PREFIX,
    POD_SUBNET,
)

NODE_LINK = "eth0"
# The kernel frees a namespace's links asynchronously once its last reference is gone.
LINK_GONE_SECONDS = 5.0


def host_link_exists() -> bool:
    return Path("/sys/class/net", HOST_LINK).exists()


def in_node(paths: NodePaths, argv: list[str]) -> list[str]:
    return ["nsenter", f"--net={paths.net_ns}", "--", *argv]


def setup_commands(paths: NodePaths) -> list[list[str]]:
    """The commands that join a new network namespace to the host; the host's address last,
    so that its presence means all of them ran."""
    node_address = f"{NODE_ADDRESS}/{NODE_NETWORK_PREFIX}"
    host_address = f"{HOST_ADDRESS}/{NODE_NETWORK_PREFIX}"
    peer = ["peer", "name", NODE_LINK, "netns", str(paths.net_ns)]
    return [
        ["ip", "link", "add", HOST_LINK, "type", "veth", *peer],
        ["ip", "link", "set", HOST_LINK, "up"],
        in_node(paths, ["ip", "link", "set", "lo", "up"]),
        in_node(paths, ["ip", "address", "add", node_address, "dev", NODE_LINK]),
        in_node(paths, ["ip", "link", "set", NODE_LINK, "up"]),
        # Locally made packets need a route before kube-proxy's DNAT rewrites a ClusterIP.
        in_node(paths, ["ip", "route", "add", "default", "via", HOST_ADDRESS]),
        ["ip", "route", "add", POD_SUBNET, "via", NODE_ADDRESS, "dev", HOST_LINK, "onlink"],
        ["ip", "address", "add", host_address, "dev", HOST_LINK],
    ]


def _host_address_set() -> bool:
    result = subprocess.run(
        ["ip", "-o", "-4", "address", "show", "dev", HOST_LINK],
        capture_output=True,
        text=True,
        check=False,
    )
    if f" {HOST_ADDRESS}/{NODE_NETWORK_PREFIX} " not in result.stdout:
        return False
    routes = subprocess.run(
        ["ip", "-4", "route", "show", POD_SUBNET, "dev", HOST_LINK],
        capture_output=True,
        text=True,
        check=False,
    )
    return POD_SUBNET in routes.stdout  # set up before this stop added the route: redo


def ensure(paths: NodePaths) -> None:
    """Create the namespace and the veth pair unless both exist with the host's end addressed;
    anything less (a set-up cut short, a link without our namespace) is replaced."""
    private_directory(paths.namespaces)
    if mounted(paths.net_ns) and host_link_exists() and _host_address_set():
        return
    if host_link_exists():
        run(["ip", "link", "delete", HOST_LINK])
    if mounted(paths.net_ns):
        remove(paths)
    paths.net_ns.touch()
    run(["unshare", f"--net={paths.net_ns}", "true"])
    for command in setup_commands(paths):
        run(command)


def remove(paths: NodePaths) -> None:
    """Drop our reference to the namespace; its links go once nothing else holds it."""
    if mounted(paths.net_ns):
        run(["umount", str(paths.net_ns)])
    paths.net_ns.unlink(missing_ok=True)
    deadline = time.monotonic() + LINK_GONE_SECONDS
    while host_link_exists() and time.monotonic() < deadline:
        time.sleep(0.1)
