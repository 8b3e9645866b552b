"""The real node (devcluster.kubelet): containerd, runc and the kubelet `devkubelet`, run by
`python -m devcluster up` in namespaces of ours. Pods there run in containers from the images
devcluster.images builds, reach the API server through the `kubernetes` Service (kube-proxy)
and S3 on the host's address, and `down` leaves nothing of the node on the host."""

from __future__ import annotations

import json
import os
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from devcluster import cluster, processes
from devcluster.kubelet import cgroups
from devcluster.kubelet.namespaces import KUBELET_SYSCTLS
from devcluster.kubelet.paths import CGROUP_ROOT, NodePaths
from devcluster.layout import (
    APISERVER_URL,
    HOST_ADDRESS,
    HOST_LINK,
    REAL_NODE_NAME,
    S3_PORT,
    Layout,
)
from devcluster.probes import admin_tls, api_get
from devcluster.stores import S3_STORES
from devcluster.testing import DevCluster, Kubectl

# Alone on the cluster (make test's second lane): it takes the cluster down and up.
pytestmark = pytest.mark.exclusive

Obj = dict[str, Any]
BUSYBOX = "busybox:1.36"
# The Dockerfiles' base image, built by devcluster.images: a TLS client that busybox's wget,
# which the API server's cipher suites refuse, is not.
PYTHON = "python:3.11.11-slim-bookworm"
RUNNING_TIMEOUT_SECONDS = 60.0


def _pod(name: str, image: str, command: list[str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "main", "image": image, "command": command}],
        },
    }


def _wait_phase(
    local_cluster: DevCluster, namespace: str, name: str, phases: set[str]
) -> tuple[Obj, float]:
    """The pod once its phase is one of `phases`, and when that was seen (monotonic)."""
    deadline = time.monotonic() + RUNNING_TIMEOUT_SECONDS
    while True:
        pod = api_get(local_cluster.layout, f"/api/v1/namespaces/{namespace}/pods/{name}")
        if pod is not None and pod.get("status", {}).get("phase") in phases:
            return pod, time.monotonic()
        assert time.monotonic() < deadline, json.dumps(pod and pod.get("status"), indent=1)
        time.sleep(0.05)


def _create(local_cluster: DevCluster, namespace: str, pod: Obj) -> float:
    """POST the pod as the admin; when it was sent (monotonic)."""
    request = urllib.request.Request(
        f"{APISERVER_URL}/api/v1/namespaces/{namespace}/pods",
        data=json.dumps(pod).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    sent = time.monotonic()
    with urllib.request.urlopen(request, timeout=10, context=admin_tls(local_cluster.layout)):
        return sent


def test_a_pod_runs_in_a_container_on_the_real_node_and_its_log_and_exec_go_through_the_api(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    script = "echo started as $(id -u) on $(hostname); exec sleep 3600"
    _create(local_cluster, namespace, _pod("sleeper", BUSYBOX, ["sh", "-c", script]))

    pod, _seen = _wait_phase(local_cluster, namespace, "sleeper", {"Running"})

    assert pod["spec"]["nodeName"] == REAL_NODE_NAME
    assert pod["status"]["podIP"].startswith("10.88.0.")
    [status] = pod["status"]["containerStatuses"]
    assert status["containerID"].startswith("containerd://")
    deadline = time.monotonic() + 10
    while "started" not in (log := kubectl.run("logs", "-n", namespace, "sleeper").stdout):
        assert time.monotonic() < deadline, "no log line through the API server"
        time.sleep(0.2)
    # The pod's own UTS namespace: its hostname is the pod's name, not the host's.
    assert log == "started as 0 on sleeper\n"
    exec_result = kubectl.run("exec", "-n", namespace, "sleeper", "--", "cat", "/proc/1/cmdline")
    assert exec_result.stdout.split("\0")[:2] == ["sleep", "3600"]


def test_a_pod_reaches_s3_on_the_hosts_address(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    url = f"http://{HOST_ADDRESS}:{S3_PORT}/health"
    _create(local_cluster, namespace, _pod("s3-probe", BUSYBOX, ["wget", "-q", "-O-", url]))

    pod, _seen = _wait_phase(local_cluster, namespace, "s3-probe", {"Succeeded", "Failed"})

    log = kubectl.run("logs", "-n", namespace, "s3-probe").stdout
    assert pod["status"]["phase"] == "Succeeded", log


SELF_REVIEW = """
import json, os, ssl, urllib.request
account = "/var/run/secrets/kubernetes.io/serviceaccount"
host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
request = urllib.request.Request(
    f"https://{host}:{port}/apis/authentication.k8s.io/v1/selfsubjectreviews",
    data=json.dumps(review).encode(),
    headers={"Authorization": "Bearer " + open(account + "/token").read(),
             "Content-Type": "application/json"},
)
context = ssl.create_default_context(cafile=account + "/ca.crt")
answer = json.load(urllib.request.urlopen(request, context=context, timeout=10))
print(host, answer["status"]["userInfo"]["username"])
"""


def test_the_service_account_token_works_from_a_pod_through_the_kubernetes_service(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    _create(local_cluster, namespace, _pod("in-cluster", PYTHON, ["python", "-c", SELF_REVIEW]))

    pod, _seen = _wait_phase(local_cluster, namespace, "in-cluster", {"Succeeded", "Failed"})

    log = kubectl.run("logs", "-n", namespace, "in-cluster").stdout
    assert pod["status"]["phase"] == "Succeeded", log
    # The Service's ClusterIP, verified against the cluster CA, not the API server's own address.
    service_ip = kubectl.json("get", "service", "kubernetes", "-n", "default")["spec"]["clusterIP"]
    assert log == f"{service_ip} system:serviceaccount:{namespace}:default\n"


def test_pods_reach_running_within_seconds_of_their_creation(
    local_cluster: DevCluster, namespace: str
) -> None:
    latencies = []
    for index in range(20):
        name = f"quick-{index}"
        sent = _create(local_cluster, namespace, _pod(name, BUSYBOX, ["sleep", "3600"]))
        _pod_object, seen = _wait_phase(local_cluster, namespace, name, {"Running"})
        latencies.append(seen - sent)

    p50 = statistics.median(latencies)
    p95 = statistics.quantiles(latencies, n=20)[-1]
    print(f"pod create -> Running over 20 pods: p50 {p50:.2f} s, p95 {p95:.2f} s")
    assert p95 < 10.0, latencies


def _cgroups_of(process: Path) -> str:
    try:
        return (process / "cgroup").read_text()
    except OSError:  # gone meanwhile
        return ""


def _cpu_cgroup(pid: int) -> str:
    """The process's cgroup in the hierarchy that holds the cpu controller."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _number, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(",") or controllers == "":
            return path
    raise AssertionError(f"no cpu cgroup for {pid}")


def test_the_nodes_daemons_run_in_a_cgroup_of_their_own_and_its_containers_in_their_pods(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    """containerd starved of CPU loses a container's output (devcluster.kubelet.cgroups)."""
    layout = local_cluster.layout
    for name in ("containerd", "kubelet", "kube-proxy"):
        pid = processes.alive(layout.pid_file(name))
        assert pid is not None, name
        assert _cpu_cgroup(pid) == f"/{cgroups.DAEMONS}", name
    shares = Path("/sys/fs/cgroup/cpu", cgroups.DAEMONS, "cpu.shares")
    assert int(shares.read_text()) == cgroups.DAEMON_CPU_SHARES
    _create(local_cluster, namespace, _pod("weighed", BUSYBOX, ["sleep", "3600"]))
    pod, _seen = _wait_phase(local_cluster, namespace, "weighed", {"Running"})
    cgroup = f"/pod{pod['metadata']['uid']}/"
    sleepers = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and cgroup in _cgroups_of(entry)
    ]
    assert sleepers, "no process in the pod's cgroup"
    assert all(_cpu_cgroup(pid).startswith(f"/{CGROUP_ROOT}/kubepods") for pid in sleepers)


def _node_processes(layout: Layout) -> list[str]:
    """Processes started by the cluster (marked), containerd's shims (they name its socket) and
    whatever runs in the node's cgroups."""
    marker = f"{processes.MARKER_VARIABLE}={layout.root}".encode()
    socket = str(NodePaths.of(layout).containerd_socket).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            environment = (entry / "environ").read_bytes().split(b"\0")
            cgroup = (entry / "cgroup").read_text()
        except OSError:
            continue
        if marker in environment or socket in command or f"/{CGROUP_ROOT}/" in cgroup:
            found.append(f"{entry.name}: {command[:4]!r}")
    return found


def _mount_points(pid: int | str) -> set[str]:
    with open(f"/proc/{pid}/mountinfo") as mountinfo:
        return {line.split()[4] for line in mountinfo}


def test_down_leaves_no_process_mount_link_or_cgroup_of_the_node_nor_a_changed_sysctl(
    local_cluster: DevCluster, namespace: str
) -> None:
    """Takes the session's cluster down and up again (some 20 s): with a pod running, so that
    there are shims, containers, mounts and cgroups to clean up."""
    if not local_cluster.owned:
        pytest.skip("the cluster belongs to someone else; only its owner may take it down")
    layout = local_cluster.layout
    _create(local_cluster, namespace, _pod("left-running", BUSYBOX, ["sleep", "3600"]))
    _wait_phase(local_cluster, namespace, "left-running", {"Running"})
    kubelet = processes.alive(layout.pid_file("kubelet"))
    assert kubelet is not None
    # The kubelet sets these sysctls in files of ours, mounted over them in its namespace only.
    sysctl_paths = {f"/proc/sys/{name}" for name in KUBELET_SYSCTLS}
    assert sysctl_paths <= _mount_points(kubelet)
    assert not sysctl_paths & _mount_points("self")
    sysctls = {name: Path("/proc/sys", name).read_text() for name in KUBELET_SYSCTLS}

    cluster.down(layout)

    try:
        assert _node_processes(layout) == []
        assert [p for p in _mount_points("self") if Path(p).is_relative_to(layout.root)] == []
        assert not Path("/sys/class/net", HOST_LINK).exists()
        assert list(Path("/sys/fs/cgroup").glob(f"*/{CGROUP_ROOT}*")) == []
    finally:
        cluster.up(layout, s3=S3_STORES)
    assert {name: Path("/proc/sys", name).read_text() for name in KUBELET_SYSCTLS} == sysctls
