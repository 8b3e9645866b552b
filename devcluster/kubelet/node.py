"""The real node as parts of the cluster: containerd, the kubelet and kube-proxy, each started
inside the node's namespaces, and what `up` prepares for them and `down` removes after."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TextIO

import yaml

from devcluster import processes
from devcluster.build import binary_path
from devcluster.components import Component
from devcluster.kubelet import cgroups, containerd, kube_proxy, kubelet_config, namespaces, network
from devcluster.kubelet.mounts import host_mount_points, mounted, run, under
from devcluster.kubelet.paths import NodePaths
from devcluster.layout import HOST_LINK, NODE_ADDRESS, REAL_NODE_NAME, Layout
from devcluster.probes import http_status, node_ready


def _environment(layout: Layout) -> Mapping[str, str]:
    # containerd mounts image layers on temporary directories while it unpacks them.
    return {"TMPDIR": str(NodePaths.of(layout).tmp)}


def _containerd(layout: Layout) -> list[str]:
    paths = NodePaths.of(layout)
    return cgroups.joined(namespaces.enter(paths, containerd.argv(paths)))


def _containerd_healthy(layout: Layout) -> bool:
    paths = NodePaths.of(layout)
    return containerd.answers(paths) and containerd.cri_serving(layout.log_file("containerd"))


def _kubelet(layout: Layout) -> list[str]:
    paths = NodePaths.of(layout)
    argv = [str(binary_path("kubelet")), *kubelet_config.argv(layout, paths)]
    return cgroups.joined(namespaces.enter(paths, argv))


def _kubelet_healthy(layout: Layout) -> bool:
    # Ready alone may be a stale True left by a kubelet that has just stopped.
    url = f"http://{NODE_ADDRESS}:{kubelet_config.HEALTHZ_PORT}/healthz"
    return http_status(url) == 200 and node_ready(layout, REAL_NODE_NAME)


def _kube_proxy(layout: Layout) -> list[str]:
    paths = NodePaths.of(layout)
    argv = [str(binary_path("kube-proxy")), *kube_proxy.argv(paths)]
    return cgroups.joined(namespaces.enter(paths, argv))


def _kube_proxy_healthy(layout: Layout) -> bool:
    return http_status(f"http://{NODE_ADDRESS}:{kube_proxy.HEALTHZ_PORT}/healthz") == 200


# Their ports are inside the node's network namespace, none on the host.
CONTAINERD = Component("containerd", (), _containerd, _containerd_healthy, environment=_environment)
KUBELET = Component("kubelet", (), _kubelet, _kubelet_healthy, environment=_environment)
KUBE_PROXY = Component("kube-proxy", (), _kube_proxy, _kube_proxy_healthy)
# In start order; they stop in reverse.
COMPONENTS = (CONTAINERD, KUBELET, KUBE_PROXY)


def prepare(layout: Layout, sandbox_image: str) -> None:
    """The node's namespaces, cgroups and configuration files; the network first, since the
    API server listens on its host address."""
    paths = NodePaths.of(layout)
    paths.root.mkdir(parents=True, exist_ok=True)
    network.ensure(paths)
    namespaces.ensure(paths)
    cgroups.ensure()
    paths.tmp.mkdir(parents=True, exist_ok=True)
    paths.cni_config_dir.mkdir(parents=True, exist_ok=True)
    files = {
        paths.containerd_config: containerd.configuration(paths, sandbox_image),
        containerd.cni_configuration(paths): json.dumps(containerd.cni_network(), indent=2),
        paths.kubelet_config: yaml.safe_dump(kubelet_config.configuration(layout, paths)),
        paths.kube_proxy_config: yaml.safe_dump(kube_proxy.configuration(layout, paths)),
    }
    for path, text in files.items():
        # kube-proxy exits when its configuration file is written to, even unchanged.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def import_images(layout: Layout, archives: Iterable[Path], log: TextIO) -> None:
    containerd.import_images(NodePaths.of(layout), archives, log)


def _shims(paths: NodePaths) -> list[int]:
    """containerd's shims, which name its socket on their command line."""
    needle = str(paths.containerd_socket).encode()
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError):
            if entry.name.isdigit() and needle in (entry / "cmdline").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def stop_pods(layout: Layout) -> None:
    """Once containerd and the kubelet are stopped: kill the shims and the containers, which
    outlive both by design."""
    for pid in _shims(NodePaths.of(layout)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cgroups.kill_processes()


def teardown(layout: Layout) -> None:
    """After every process of the cluster is gone: remove the node's cgroups, drop its
    namespaces, and empty its /run as a reboot would."""
    paths = NodePaths.of(layout)
    cgroups.remove()
    namespaces.remove(paths)
    network.remove(paths)
    if mounted(paths.namespaces):
        run(["umount", str(paths.namespaces)])
    # rmtree would descend into a mount and delete what it shows; the node's mounts are its
    # namespace's, so none should be here on the host, but if one is, /run stays as it is.
    if not any(under(Path(point), paths.root) for point in host_mount_points()):
        for volatile in (paths.run, paths.tmp):
            shutil.rmtree(volatile, ignore_errors=True)


def leftovers(layout: Layout) -> list[str]:
    """What of the node would outlive `down`: none of it should."""
    found = [f"process {pid}" for pid in processes.marked_processes(str(layout.root))]
    found += [f"process {pid} in the node's cgroups" for pid in sorted(cgroups.processes())]
    found += [f"cgroup {root}" for root in cgroups.roots()]
    found += [f"mount {point}" for point in host_mount_points() if under(Path(point), layout.root)]
    if network.host_link_exists():
        found.append(f"network link {HOST_LINK}")
    return found
