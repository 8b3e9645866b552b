"""The real node's configuration (devcluster.kubelet): what containerd, the kubelet and
kube-proxy are told, that all their state stays under the cluster directory, and the pieces of
`down`'s cleanup that need no root: the cgroup walk, the mount table, the image list."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from devcluster.components import LEAVES
from devcluster.kubelet import cgroups, containerd, kube_proxy, kubelet_config, namespaces, network
from devcluster.kubelet.mounts import mount_points
from devcluster.kubelet.paths import CGROUP_ROOT, NodePaths
from devcluster.layout import HOST_ADDRESS, HOST_LINK, NODE_ADDRESS, POD_SUBNET, Layout
from devcluster.pki import Leaf, ensure_pki, write_kubeconfig


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path / "cluster")


@pytest.fixture
def paths(layout: Layout) -> NodePaths:
    return NodePaths.of(layout)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_containerd_runs_restricted_oom_scores_on_overlayfs_with_state_of_ours(
    paths: NodePaths,
) -> None:
    config = tomllib.loads(containerd.configuration(paths, "localhost/pause:1"))
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]

    assert config["version"] == 2
    assert cri["restrict_oom_score_adj"] is True
    assert cri["sandbox_image"] == "localhost/pause:1"
    assert cri["containerd"]["snapshotter"] == "overlayfs"
    assert cri["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is False
    assert cri["cni"] == {"bin_dir": "/usr/lib/cni", "conf_dir": str(paths.cni_config_dir)}
    assert config["grpc"]["address"] == str(paths.containerd_socket)
    # Every path it writes (root, state, socket, the opt plugin's /opt/containerd) is ours.
    written = [config["root"], config["state"], config["grpc"]["address"]]
    written.append(config["plugins"]["io.containerd.internal.v1.opt"]["path"])
    assert all(Path(p).is_relative_to(paths.root) for p in written)


def test_pods_get_a_masqueraded_bridge_outside_the_service_and_host_ranges() -> None:
    [bridge] = containerd.cni_network()["plugins"]

    assert bridge["type"] == "bridge" and bridge["ipMasq"] is True and bridge["isGateway"]
    assert bridge["ipam"]["ranges"] == [[{"subnet": "10.88.0.0/24"}]]


def test_the_kubelet_takes_cgroup_v1_on_a_cgroup_root_of_ours_and_any_pod(
    layout: Layout, paths: NodePaths
) -> None:
    config = kubelet_config.configuration(layout, paths)
    argv = kubelet_config.argv(layout, paths)

    assert (config["failCgroupV1"], config["cgroupDriver"]) == (False, "cgroupfs")
    assert config["cgroupRoot"] == f"/{CGROUP_ROOT}"
    # The cluster's one node: no taint or label keeps a pod off it.
    assert "registerWithTaints" not in config
    assert not [a for a in argv if a.startswith(("--node-labels", "--register-with-taints"))]
    assert "--hostname-override=devkubelet" in argv
    assert f"--node-ip={NODE_ADDRESS}" in argv
    assert config["authentication"]["webhook"] == {"enabled": True}
    assert config["authentication"]["anonymous"] == {"enabled": False}
    assert config["authorization"] == {"mode": "Webhook"}
    files = [s for s in _strings(config) if s.startswith("/") and s != config["cgroupRoot"]]
    files += [a.split("=", 1)[1] for a in argv if "=/" in a]
    assert files and all(Path(f).is_relative_to(layout.root) for f in files)


def test_the_node_certificates_name_the_node_and_its_address() -> None:
    leaves = {leaf.name: leaf for leaf in LEAVES}

    assert (leaves["kubelet"].common_name, leaves["kubelet"].organization) == (
        "system:node:devkubelet",
        "system:nodes",
    )
    assert leaves["kubelet-serving"].server
    assert NODE_ADDRESS in leaves["kubelet-serving"].ip_addresses
    assert HOST_ADDRESS in leaves["apiserver"].ip_addresses
    assert leaves["kube-proxy"].common_name == "system:kube-proxy"


def test_kube_proxy_leaves_the_hosts_conntrack_settings_alone(
    layout: Layout, paths: NodePaths
) -> None:
    config = kube_proxy.configuration(layout, paths)

    assert config["mode"] == "iptables"
    assert config["conntrack"]["maxPerCore"] == 0 and config["conntrack"]["min"] == 0
    assert config["hostnameOverride"] == "devkubelet"


def test_the_host_gets_only_its_end_of_the_link(paths: NodePaths) -> None:
    commands = network.setup_commands(paths)
    on_host = [c for c in commands if c[0] != "nsenter"]

    assert on_host[0][:6] == ["ip", "link", "add", HOST_LINK, "type", "veth"]
    assert on_host[0][-2:] == ["netns", str(paths.net_ns)]
    # No sysctl or firewall rule on the host: only its end of the link, addressed, and the
    # pod subnet's route through it (so the operator reaches its pods).
    assert all(c[:2] in (["ip", "link"], ["ip", "address"], ["ip", "route"]) for c in on_host)
    assert all(HOST_LINK in c for c in on_host)
    [route] = [c for c in on_host if c[:2] == ["ip", "route"]]
    assert route[3:] == [POD_SUBNET, "via", NODE_ADDRESS, "dev", HOST_LINK, "onlink"]


def test_the_kubelets_sysctls_and_fixed_directories_are_covered_inside_the_node(
    paths: NodePaths,
) -> None:
    targets = [command[-1] for command in namespaces.bind_commands(paths)]

    for name in ("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"):
        assert f"/proc/sys/{name}" in targets
    assert {"/run", "/var/lib", "/var/log"} <= set(targets)
    assert all(
        f"--mount={paths.mount_ns}" in command for command in namespaces.bind_commands(paths)
    )
    assert namespaces.enter(paths, ["kubelet"])[-2:] == ["--", "kubelet"]


def test_a_namespace_lacking_a_sysctl_mount_is_told_apart(paths: NodePaths) -> None:
    targets = [command[-1] for command in namespaces.bind_commands(paths)]
    lines = [f"{n} 1 0:1 / {target} rw - ext4 /dev/vda rw" for n, target in enumerate(targets)]

    assert namespaces.missing_mounts(paths, "\n".join(lines)) == []
    without_panic = [line for line in lines if " /proc/sys/kernel/panic " not in line]
    assert namespaces.missing_mounts(paths, "\n".join(without_panic)) == ["/proc/sys/kernel/panic"]


def test_a_cluster_directory_the_node_would_hide_is_refused(tmp_path: Path) -> None:
    paths = NodePaths(Path("/var/lib/agentjobs/cluster/realnode"))

    with pytest.raises(namespaces.NamespaceError, match="under /var/lib"):
        namespaces.ensure(paths)


def test_mount_points_are_read_unescaped() -> None:
    mountinfo = (
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "45 27 254:0 /a\\040b /tmp/a\\040b/ns rw - ext4 /dev/vda rw\n"
    )

    assert mount_points(mountinfo) == ["/proc", "/tmp/a b/ns"]


def _archive(path: Path, names: list[str], digest: str) -> Path:
    annotations = [{"io.containerd.image.name": name} for name in names]
    index = {"manifests": [{"digest": digest, "annotations": a} for a in annotations]}
    data = json.dumps(index).encode()
    with tarfile.open(path, "w") as archive:
        info = tarfile.TarInfo("index.json")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


def test_an_archive_is_imported_unless_the_node_holds_its_image_under_every_name(
    tmp_path: Path,
) -> None:
    archive = containerd.read_archive(
        _archive(tmp_path / "a.tar", ["localhost/a:1", "localhost/a:latest"], "sha256:aa")
    )
    listed = containerd.parse_image_list(
        "REF TYPE DIGEST SIZE PLATFORMS LABELS\n"
        "localhost/a:1 application/vnd.oci.image.manifest.v1+json sha256:aa 1.0 MiB linux/amd64 -\n"
    )

    assert archive.names == ("localhost/a:1", "localhost/a:latest")
    assert listed == {"localhost/a:1": "sha256:aa"}
    assert not all(listed.get(name) == archive.digest for name in archive.names)


def _hierarchies(mount: Path) -> None:
    for controller in ("cpu,cpuacct", "cpuset", "memory"):
        (mount / controller).mkdir(parents=True)
    (mount / "cpuset" / "cpuset.cpus").write_text("0-1\n")
    (mount / "cpuset" / "cpuset.mems").write_text("0\n")


def test_the_cgroup_root_is_made_in_every_hierarchy_and_the_daemons_weigh_more(
    tmp_path: Path,
) -> None:
    _hierarchies(tmp_path)

    cgroups.ensure(tmp_path)

    daemons = tmp_path / "cpu,cpuacct" / cgroups.DAEMONS
    assert cgroups.roots(tmp_path) == [
        tmp_path / "cpu,cpuacct" / CGROUP_ROOT,
        tmp_path / "cpuset" / CGROUP_ROOT,
        tmp_path / "memory" / CGROUP_ROOT,
        daemons,
    ]
    assert int((daemons / "cpu.shares").read_text()) > 1024


@pytest.mark.parametrize(("enabled", "made"), [("cpu memory", True), ("memory", False)])
def test_under_cgroup_v2_the_daemons_weigh_more_only_where_cpu_is_handed_down(
    tmp_path: Path, enabled: str, made: bool
) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory\n")
    (tmp_path / "cgroup.subtree_control").write_text(f"{enabled}\n")

    cgroups.ensure(tmp_path)

    weight = tmp_path / cgroups.DAEMONS / "cpu.weight"
    assert weight.exists() is made
    if made:
        assert int(weight.read_text()) > 100
    assert (cgroups.joined(["true"], tmp_path) != ["true"]) is made


def test_a_daemon_runs_in_the_daemons_cgroup_under_its_own_pid(tmp_path: Path) -> None:
    _hierarchies(tmp_path)
    cgroups.ensure(tmp_path)

    argv = cgroups.joined(["sh", "-c", "echo $$"], tmp_path)
    printed = subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    procs = tmp_path / "cpu,cpuacct" / cgroups.DAEMONS / "cgroup.procs"
    assert procs.read_text().split() == printed.split()
    assert cgroups.processes(tmp_path) == {int(printed)}


def test_without_a_cpu_hierarchy_a_daemon_starts_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    cgroups.ensure(tmp_path)
    assert cgroups.joined(["containerd"], tmp_path) == ["containerd"]


def test_the_processes_anywhere_under_the_cgroup_root_are_found(tmp_path: Path) -> None:
    _hierarchies(tmp_path)
    pod = tmp_path / "memory" / CGROUP_ROOT / "kubepods" / "pod1"
    pod.mkdir(parents=True)
    (pod / "cgroup.procs").write_text("101\n102\n")
    (tmp_path / "memory" / CGROUP_ROOT / "cgroup.procs").write_text("")

    assert cgroups.processes(tmp_path) == {101, 102}


def test_a_certificate_missing_a_name_added_since_is_issued_again(tmp_path: Path) -> None:
    old = Leaf("apiserver", "kube-apiserver", server=True, ip_addresses=("127.0.0.1",))
    new = Leaf("apiserver", "kube-apiserver", server=True, ip_addresses=("127.0.0.1", "10.87.0.1"))
    ensure_pki(tmp_path, [old])
    first = (tmp_path / "apiserver.crt").read_bytes()

    ensure_pki(tmp_path, [old])
    assert (tmp_path / "apiserver.crt").read_bytes() == first
    ensure_pki(tmp_path, [new])
    assert (tmp_path / "apiserver.crt").read_bytes() != first


def test_a_kubeconfig_is_rewritten_only_when_what_it_says_changes(tmp_path: Path) -> None:
    ensure_pki(tmp_path, [Leaf("admin", "admin", "system:masters")])
    path = tmp_path / "admin.kubeconfig"
    write_kubeconfig(path, "https://127.0.0.1:6443", tmp_path, "admin")
    inode = path.stat().st_ino

    write_kubeconfig(path, "https://127.0.0.1:6443", tmp_path, "admin")
    assert path.stat().st_ino == inode
    write_kubeconfig(path, "https://10.87.0.1:6443", tmp_path, "admin")
    assert "https://10.87.0.1:6443" in path.read_text()


def _log(tmp_path: Path, *lines: str) -> Path:
    log = tmp_path / "containerd.log"
    log.write_text("".join(f'time="t" level=info msg="{line}"\n' for line in lines))
    return log


def test_the_kubelet_waits_until_containerds_cri_service_has_recovered_and_serves(
    tmp_path: Path,
) -> None:
    started = ["Start cri plugin with config {}", "containerd successfully booted in 0.01s"]
    recovering = [*started, "Start recovering state"]
    assert not containerd.cri_serving(_log(tmp_path, *recovering))
    assert containerd.cri_serving(_log(tmp_path, *recovering, "Start streaming server"))
    # The previous run's readiness does not count for the one started after it.
    again = [*recovering, "Start streaming server", "stopped", *recovering]
    assert not containerd.cri_serving(_log(tmp_path, *again))
    # Up so long that its start has left the tail: it serves.
    assert containerd.cri_serving(_log(tmp_path, "Start streaming server", "pulled an image"))
    assert not containerd.cri_serving(tmp_path / "missing.log")
