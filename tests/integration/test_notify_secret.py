"""The webhook signing secret read through the real API server (R49).

Cases: a Secret's key comes back as its bytes and signs; a Secret that does
not exist, or lacks the key, is a wait (retry) that names what is missing
and never its value.
"""

from __future__ import annotations

import asyncio
import base64

import pytest

from agentjobs.adapters.kube import Kube
from agentjobs.contract.notifications import signing
from agentjobs.services.notifier import SecretUnavailable, kube_secret_reader
from devcluster.testing import DevCluster, Kubectl

SECRET = "whsec_" + base64.b64encode(bytes(range(40, 72))).decode()


async def read(kubeconfig: str, namespace: str, name: str, key: str) -> bytes:
    kube = await Kube.connect(kubeconfig)
    try:
        return await kube_secret_reader(kube)(namespace, name, key)
    finally:
        await kube.close()


def test_r49_the_signing_secret_is_read_from_the_executions_namespace(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    kubeconfig = local_cluster.env["KUBECONFIG"]
    kubectl.run(
        "create", "secret", "generic", "hooks", "-n", namespace, f"--from-literal=signing={SECRET}"
    )
    value = asyncio.run(read(kubeconfig, namespace, "hooks", "signing"))
    assert value == SECRET.encode()
    assert signing.signing_key(value) == bytes(range(40, 72))
    for name, key, says in (
        ("hooks", "other", "Secret hooks has no key other"),
        ("absent", "signing", "Secret absent does not exist"),
    ):
        with pytest.raises(SecretUnavailable, match=says) as missing:
            asyncio.run(read(kubeconfig, namespace, name, key))
        assert missing.value.retry
        assert SECRET not in str(missing.value)
