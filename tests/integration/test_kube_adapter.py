"""The operator's API adapter against the real API server: what it sends, it reads back.

Case: a lone UTF-16 surrogate that an agent's text kept is sent escaped (json, not orjson,
encodes requests), and the API server stores and answers U+FFFD in its place, so the answers'
decoder (orjson, which refuses a lone surrogate escape) reads every answer: a status write
holding one is not refused, nor retried for ever.
"""

from __future__ import annotations

import asyncio

from agentjobs.adapters import paths
from agentjobs.adapters.kube import Kube
from devcluster.testing import DevCluster


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
