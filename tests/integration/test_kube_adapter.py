"""The operator's API adapter against the real API server: what it sends, it reads back.

Case: a lone UTF-16 surrogate that an agent's text kept is sent escaped (json, not orjson,
encodes requests), and the API server stores and answers U+FFFD in its place, so the answers'
decoder (orjson, which refuses a lone surrogate escape) reads every answer: a status write
holding one is not refused, nor retried for ever.

Case (R76): a kubelet that fails to read a container's log once its answer has begun (here:
its log file removed) answers 200 with its error as the body; the adapter refuses that
answer instead of giving the error as the container's last words, or as its last line.

Case: a follow of a silent container holds a connection whose kernel probes the API server
while nothing comes (a vanished peer is found without a read timeout ending the stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time

import pytest

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError, Kube
from agentjobs.adapters.tcp_keepalive import KEEPALIVE_IDLE
from devcluster.kubelet.paths import NodePaths
from devcluster.layout import APISERVER_PORT
from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import BUSYBOX


def _run_pod(
    kubectl: Kubectl, namespace: str, name: str, command: list[str], *, until: str
) -> None:
    """A pod of one container, ``main``, running ``command``, once its phase is ``until``."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": BUSYBOX, "command": command}],
        },
    }
    kubectl.apply(pod, namespace)
    deadline = time.monotonic() + 60
    while kubectl.json("get", "pod", name, "-n", namespace)["status"].get("phase") != until:
        assert time.monotonic() < deadline, f"the pod {name} is not {until}"
        time.sleep(0.2)


async def _write_and_read(kubeconfig: str, namespace: str) -> tuple[str, str]:
    kube = await Kube.connect(kubeconfig)
    try:
        body = {"metadata": {"name": "surrogate"}, "data": {"comments": "cut at \ud83d here"}}
        made = await kube.create(paths.config_map(namespace), body)
        assert made is not None
        read = await kube.get(paths.config_map(namespace, "surrogate"))
        assert read is not None
        return made["data"]["comments"], read["data"]["comments"]
    finally:
        await kube.close()


def test_a_lone_surrogate_is_sent_escaped_and_answered_as_the_replacement_character(
    local_cluster: DevCluster, namespace: str
) -> None:
    answered, read = asyncio.run(_write_and_read(local_cluster.env["KUBECONFIG"], namespace))
    assert answered == read == "cut at \ufffd here"


async def _read_log(kubeconfig: str, namespace: str, pod: str) -> bytes:
    kube = await Kube.connect(kubeconfig)
    try:
        stream = kube.stream_log(namespace, pod, "main", follow=False, idle_seconds=30)
        return b"".join([chunk async for chunk in stream])
    finally:
        await kube.close()


async def _last_line(kubeconfig: str, namespace: str, pod: str) -> str:
    kube = await Kube.connect(kubeconfig)
    try:
        return await kube.log_tail(namespace, pod, "main")
    finally:
        await kube.close()


def test_r76_a_log_the_kubelet_cannot_read_is_refused_not_read_as_its_error(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    script = "echo 'TASK_RESULT: {\"success\": true}'; echo TASK_RESULT_END"
    _run_pod(kubectl, namespace, "written", ["sh", "-c", script], until="Succeeded")
    kubeconfig = local_cluster.env["KUBECONFIG"]
    read = asyncio.run(_read_log(kubeconfig, namespace, "written"))
    assert read == b'TASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    assert asyncio.run(_last_line(kubeconfig, namespace, "written")) == "TASK_RESULT_END"

    uid = kubectl.json("get", "pod", "written", "-n", namespace)["metadata"]["uid"]
    logs = NodePaths.of(local_cluster.layout).pod_logs / f"{namespace}_written_{uid}" / "main"
    for log_file in logs.iterdir():
        log_file.unlink()
    # The kubelet's answer: status 200, its error as the body (kubectl prints it as the log).
    answered = kubectl.run("logs", "-n", namespace, "written")
    assert answered.returncode == 0
    assert "failed to try resolving symlinks" in answered.stdout
    with pytest.raises(ApiError, match="not a log line") as refused:
        asyncio.run(_read_log(kubeconfig, namespace, "written"))
    assert refused.value.reason == "NotALogLine"
    assert asyncio.run(_last_line(kubeconfig, namespace, "written")) == ""


def _api_connections() -> dict[int, int]:
    """This process's TCP connections to the API server: each one's local port, and its
    keepalive idle seconds (0 when it sends no keepalive probes)."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(fd)))  # its family and type as they are
        except OSError:
            continue
        with sock:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            try:
                peer = sock.getpeername()
            except OSError:
                continue
            if peer[1] != APISERVER_PORT:
                continue
            probing = sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
            idle = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
            found[sock.getsockname()[1]] = idle if probing else 0
    return found


async def _follow_silently(
    kubeconfig: str, namespace: str, pod: str
) -> tuple[list[int], list[int]]:
    """The keepalive idle seconds of the connections a silent follow opened, and those of
    them still open once the follow was given up."""
    kube = await Kube.connect(kubeconfig)
    try:

        async def follow() -> None:
            async for _ in kube.stream_log(namespace, pod, "main", follow=True, idle_seconds=600):
                pass

        before = _api_connections()
        following = asyncio.create_task(follow())
        await asyncio.sleep(2)  # the stream is open, and nothing comes
        assert not following.done(), "the follow of a running container ended"
        opened = {port: idle for port, idle in _api_connections().items() if port not in before}
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following
        left = [port for port in _api_connections() if port in opened]
        return list(opened.values()), left
    finally:
        await kube.close()


def test_a_silent_follow_holds_a_connection_that_probes_its_peer_and_closes_it_when_left(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    _run_pod(kubectl, namespace, "silent", ["sleep", "300"], until="Running")
    held, left = asyncio.run(_follow_silently(local_cluster.env["KUBECONFIG"], namespace, "silent"))
    assert held, "no connection to the API server was opened for the follow"
    assert held == [KEEPALIVE_IDLE] * len(held)
    # Given up, the stream's socket is closed at once, not after a TLS goodbye that a
    # loop ending first leaves unclosed (a ResourceWarning that failed a later test).
    assert left == []
