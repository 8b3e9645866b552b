"""containerd (Debian's 1.6) for the real node: its configuration, the CNI network it gives
pods, and images imported from OCI archives (there is no registry to pull from)."""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from devcluster.kubelet.paths import NodePaths
from devcluster.layout import POD_SUBNET

CNI_BIN_DIR = Path("/usr/lib/cni")
K8S_NAMESPACE = "k8s.io"
NETWORK_NAME = "agentjobs"
BRIDGE = "cni0"
CRI = 'plugins."io.containerd.grpc.v1.cri"'


def _toml(value: str | bool) -> str:
    # A JSON string is a TOML basic string; JSON's booleans are TOML's.
    return json.dumps(value)


def configuration(paths: NodePaths, sandbox_image: str) -> str:
    """containerd.toml (config version 2)."""
    tables: dict[str, dict[str, str | bool]] = {
        "": {
            "root": str(paths.containerd_root),
            "state": str(paths.containerd_state),
        },
        "grpc": {"address": str(paths.containerd_socket)},
        # Its default, /opt/containerd, would be made on the host.
        'plugins."io.containerd.internal.v1.opt"': {"path": str(paths.containerd_root / "opt")},
        CRI: {
            "sandbox_image": sandbox_image,
            # Without CAP_SYS_RESOURCE (absent here) a sandbox may not lower its OOM score
            # adjustment below containerd's, and every sandbox failed to start.
            "restrict_oom_score_adj": True,
        },
        f"{CRI}.containerd": {"snapshotter": "overlayfs", "default_runtime_name": "runc"},
        f"{CRI}.containerd.runtimes.runc": {"runtime_type": "io.containerd.runc.v2"},
        f"{CRI}.containerd.runtimes.runc.options": {"SystemdCgroup": False},
        f"{CRI}.cni": {"bin_dir": str(CNI_BIN_DIR), "conf_dir": str(paths.cni_config_dir)},
    }
    lines = ["version = 2"]
    for table, values in tables.items():
        if table:
            lines += ["", f"[{table}]"]
        lines += [f"{key} = {_toml(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def cni_network() -> dict[str, Any]:
    """The pods' network: a bridge inside the node's namespace; traffic leaving the pod subnet
    is masqueraded as the node, so the host answers the node's address."""
    return {
        "cniVersion": "1.0.0",
        "name": NETWORK_NAME,
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "ipMasq": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": POD_SUBNET}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            }
        ],
    }


def cni_configuration(paths: NodePaths) -> Path:
    return paths.cni_config_dir / f"10-{NETWORK_NAME}.conflist"


def argv(paths: NodePaths) -> list[str]:
    return ["containerd", f"--config={paths.containerd_config}"]


def ctr(paths: NodePaths, *args: str) -> list[str]:
    return ["ctr", f"--address={paths.containerd_socket}", "--namespace", K8S_NAMESPACE, *args]


def answers(paths: NodePaths) -> bool:
    if not paths.containerd_socket.exists():
        return False
    result = subprocess.run(
        ctr(paths, "version"), capture_output=True, stdin=subprocess.DEVNULL, timeout=5, check=False
    )
    return result.returncode == 0


# Debian's containerd 1.6 logs the first as its CRI service starts, and the second as it
# marks itself initialized, once it has recovered the containers it had. In between it
# answers `ctr` but tells the kubelet "server is not initialized yet", and the kubelet exits.
CRI_STARTING = b"Start cri plugin"
CRI_SERVING = b"Start streaming server"
LOG_TAIL_BYTES = 1024 * 1024


def cri_serving(log: Path) -> bool:
    """Whether the CRI service of the containerd that writes ``log`` serves: the last start
    in the log's tail is followed by its readiness, or (a containerd long up) no start is
    in the tail at all. Asked once `ctr` answers, when the running one's start is logged."""
    try:
        with log.open("rb") as file:
            file.seek(max(0, log.stat().st_size - LOG_TAIL_BYTES))
            tail = file.read()
    except OSError:
        return False
    starting = tail.rfind(CRI_STARTING)
    return starting < 0 or tail.rfind(CRI_SERVING) > starting


@dataclass(frozen=True)
class Archive:
    path: Path
    digest: str
    names: tuple[str, ...]


def read_archive(path: Path) -> Archive:
    """The image an OCI archive holds: its manifest digest and the names it is imported as."""
    with tarfile.open(path) as archive:
        member = archive.extractfile("index.json")
        if member is None:
            raise ValueError(f"{path} has no index.json")
        manifests = json.load(member)["manifests"]
    names = tuple(
        str(m["annotations"]["io.containerd.image.name"])
        for m in manifests
        if "io.containerd.image.name" in m.get("annotations", {})
    )
    digests = {str(m["digest"]) for m in manifests}
    if len(digests) != 1 or not names:
        raise ValueError(f"{path} does not hold exactly one named image")
    return Archive(path=path, digest=digests.pop(), names=names)


def parse_image_list(text: str) -> dict[str, str]:
    """name -> manifest digest, from `ctr images ls` (columns REF TYPE DIGEST ...)."""
    images = {}
    for line in text.splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 3:
            images[columns[0]] = columns[2]
    return images


def import_images(paths: NodePaths, archives: Iterable[Path], log: TextIO) -> None:
    """Import each archive whose image the node does not hold yet under all of its names."""
    listed = subprocess.run(
        ctr(paths, "images", "ls"), capture_output=True, text=True, check=True, timeout=30
    )
    held = parse_image_list(listed.stdout)
    for archive in map(read_archive, archives):
        if all(held.get(name) == archive.digest for name in archive.names):
            continue
        print(f"importing {', '.join(archive.names)} into the node", file=log, flush=True)
        subprocess.run(
            ctr(paths, "images", "import", "--snapshotter=overlayfs", str(archive.path)),
            check=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
