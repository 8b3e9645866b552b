"""The real node's mount namespace: private, kept by a bind-mounted file under the cluster
directory, shared by containerd, the kubelet and kube-proxy (the kubelet's volume mounts must
be the ones runc sees), and entered with the node's network namespace by `enter`.

Inside it, directories of the cluster's are mounted over the fixed paths those programs write
(/run for containerd's shim sockets and the pods' network namespaces, /var/lib for the
kubelet's device-plugins and the CNI cache, /var/log for /var/log/containers), and files over
the host-wide sysctls the kubelet sets, so the host's stay as they are.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from devcluster.kubelet.mounts import mount_points, mounted, private_directory, run, under
from devcluster.kubelet.paths import NodePaths

# The kubelet's setupKernelTunables (pkg/kubelet/cm), each with the value it wants: written
# into our files first, the kubelet finds them set and writes nothing.
KUBELET_SYSCTLS = {
    "vm/overcommit_memory": "1",
    "vm/panic_on_oom": "0",
    "kernel/panic": "10",
    "kernel/panic_on_oops": "1",
    "kernel/keys/root_maxkeys": "1000000",
    "kernel/keys/root_maxbytes": "25000000",
}


class NamespaceError(RuntimeError):
    """The node's mount namespace cannot be set up here."""


def directory_mounts(paths: NodePaths) -> list[tuple[Path, Path]]:
    """(source, target) of each directory mounted inside the node."""
    return [
        (paths.run, Path("/run")),
        (paths.var_lib, Path("/var/lib")),
        (paths.var_log, Path("/var/log")),
    ]


def sysctl_file(paths: NodePaths, name: str) -> Path:
    return paths.sysctls / name.replace("/", ".")


def _mounts(paths: NodePaths) -> list[tuple[Path, Path]]:
    sysctls = [(sysctl_file(paths, name), Path("/proc/sys", name)) for name in KUBELET_SYSCTLS]
    return directory_mounts(paths) + sysctls


def bind_commands(paths: NodePaths) -> list[list[str]]:
    return [
        ["nsenter", f"--mount={paths.mount_ns}", "--", "mount", "--bind", str(source), str(target)]
        for source, target in _mounts(paths)
    ]


def missing_mounts(paths: NodePaths, mountinfo: str) -> list[str]:
    """The targets the namespace (whose /proc/self/mountinfo is `mountinfo`) lacks."""
    present = set(mount_points(mountinfo))
    return [str(target) for _source, target in _mounts(paths) if str(target) not in present]


def _inside_mountinfo(paths: NodePaths) -> str:
    command = ["nsenter", f"--mount={paths.mount_ns}", "--", "cat", "/proc/self/mountinfo"]
    result = subprocess.run(command, check=True, capture_output=True, text=True)
    return result.stdout


def enter(paths: NodePaths, argv: list[str]) -> list[str]:
    """`argv` run inside the node's network and mount namespaces (nsenter execs it, so its
    pid is the program's)."""
    return ["nsenter", f"--net={paths.net_ns}", f"--mount={paths.mount_ns}", "--", *argv]


def _check_not_hidden(paths: NodePaths) -> None:
    for _source, target in directory_mounts(paths):
        if under(paths.root, target):
            raise NamespaceError(
                f"the cluster directory {paths.root} is under {target}, which the node's mount "
                "namespace covers; choose another AGENTJOBS_CLUSTER_DIR"
            )


def ensure(paths: NodePaths) -> None:
    """Create the mount namespace and its mounts unless it exists, complete: a kubelet started
    without one of the sysctl mounts would set the host's."""
    _check_not_hidden(paths)
    private_directory(paths.namespaces)
    if not mounted(paths.mount_ns):
        _create(paths)
    missing = missing_mounts(paths, _inside_mountinfo(paths))
    if missing:
        raise NamespaceError(
            f"the node's mount namespace {paths.mount_ns} lacks mounts over {missing}; "
            "`python -m devcluster down` removes it, and `up` makes it again"
        )


def _create(paths: NodePaths) -> None:
    for source, _target in directory_mounts(paths):
        source.mkdir(parents=True, exist_ok=True)
    paths.sysctls.mkdir(parents=True, exist_ok=True)
    for name, value in KUBELET_SYSCTLS.items():
        sysctl_file(paths, name).write_text(value + "\n")
    paths.mount_ns.touch()
    run(["unshare", f"--mount={paths.mount_ns}", "--propagation", "private", "true"])
    try:
        for command in bind_commands(paths):
            run(command)
    except subprocess.CalledProcessError:
        # Nothing runs inside yet: dropped, the next `up` starts it again from scratch.
        remove(paths)
        raise


def remove(paths: NodePaths) -> None:
    """Drop our reference to the namespace: its mounts go with its last process."""
    if mounted(paths.mount_ns):
        run(["umount", str(paths.mount_ns)])
    paths.mount_ns.unlink(missing_ok=True)
