"""The operator's API adapter against the real API server: what it sends, it reads back.

Case: a lone UTF-16 surrogate that an agent's text kept is sent escaped (json, not orjson,
encodes requests), and the API server stores and answers U+FFFD in its place, so the answers'
decoder (orjson, which refuses a lone surrogate escape) reads every answer: a status write
holding one is not refused, nor retried for ever.

Case (R76): a kubelet that fails to read a container's log once its answer has begun (here:
its log file removed) answers 200 with its error as the body; the adapter refuses that
answer instead of giving the error as the container's last words, or as its last line.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError, Kube
from devcluster.kubelet.paths import NodePaths
from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import BUSYBOX


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
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "written"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": BUSYBOX, "command": ["sh", "-c", script]}],
        },
    }
    kubectl.apply(pod, namespace)
    deadline = time.monotonic() + 60
    while kubectl.json("get", "pod", "written", "-n", namespace)["status"].get("phase") != (
        "Succeeded"
    ):
        assert time.monotonic() < deadline, "the pod did not succeed"
        time.sleep(0.2)
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
