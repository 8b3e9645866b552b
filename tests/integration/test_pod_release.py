"""Letting go of phase pods against the real API server: a pod replaced under the same
name, or a write the API server refuses, ends the look-after at once instead of being
tried again for ever (each case would otherwise hang the test until its timeout)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.adapters.kube import Kube
from agentjobs.controllers.phase import pod_release
from agentjobs.kube import naming
from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import BUSYBOX

pytestmark = pytest.mark.integration


def parked_pod(name: str) -> dict[str, Any]:
    """A tracked phase pod bound to a node that does not exist, so nothing runs it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {naming.LABEL_PHASE: "gone"},
            "finalizers": [naming.POD_FINALIZER],
        },
        "spec": {
            "nodeName": "no-such-node",
            "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "agent", "image": BUSYBOX}],
        },
    }


async def look_after_a_replaced_pod(kubeconfig: str, kubectl: Kubectl, namespace: str) -> bool:
    kubectl.apply(parked_pod("replaced"), namespace)
    kubectl.run("delete", "pod", "replaced", "-n", namespace, "--wait=false")
    seen = kubectl.json("get", "pod", "replaced", "-n", namespace)
    assert seen["metadata"].get("deletionTimestamp"), "the finalizer keeps the pod"
    # What the operator saw of an earlier pod of that name: its UID is not the current one.
    earlier = copy.deepcopy(seen)
    earlier["metadata"]["uid"] = "00000000-0000-0000-0000-000000000000"
    kube = await Kube.connect(kubeconfig)
    try:
        await asyncio.wait_for(pod_release.look_after(kube, earlier, release_it=True), 20)
        current = await kube.get(paths.pod(namespace, "replaced"))
    finally:
        await kube.close()
    assert current is not None
    return naming.POD_FINALIZER in current["metadata"]["finalizers"]


def test_a_pod_replaced_under_its_name_is_left_alone_at_once(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    try:
        still_held = asyncio.run(
            look_after_a_replaced_pod(local_cluster.env["KUBECONFIG"], kubectl, namespace)
        )
        assert still_held, "the current pod's finalizer is not the earlier pod's to remove"
    finally:
        kubectl.run(
            "patch", "pod", "replaced", "-n", namespace, "--type=json",
            "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]', check=False,
        )  # fmt: skip
