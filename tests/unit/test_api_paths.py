"""R53: an object name cannot change the API path it is put in (adapters/paths.py, kube.py).

Cases: a traversal name (`../../<namespace>/secrets/<name>`, its `%2F` form) is
refused for every kind, before any request, as the API server refuses such a name;
so are `.`, `..` and an empty name or namespace; any other text (a property test)
is one segment of its own namespace's collection that reads back as the name; a
collection path names no object; the session sends a path as built, with `..` and
quoted characters intact, to a real HTTP server on loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from urllib.parse import unquote

import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from kubernetes_asyncio import client as k8s_client

from agentjobs.adapters import paths
from agentjobs.adapters.api_session import ApiSession
from agentjobs.adapters.kube import Kube

TRAVERSALS = [
    "../../victim/secrets/agentjobs-webhooks",
    "..%2F..%2Fvictim%2Fsecrets%2Fagentjobs-webhooks",
    "x/../../../victim/configmaps/canary",
    "..",
    ".",
    "",
]
BUILDERS: list[tuple[Callable[..., str], str]] = [
    (paths.config_map, "/api/v1/namespaces/tenant/configmaps"),
    (paths.secret, "/api/v1/namespaces/tenant/secrets"),
    (paths.pod, "/api/v1/namespaces/tenant/pods"),
    (paths.execution, "/apis/agentjobs.io/v1alpha1/namespaces/tenant/executions"),
    (paths.phase, "/apis/agentjobs.io/v1alpha1/namespaces/tenant/phases"),
    (paths.lease, "/apis/coordination.k8s.io/v1/namespaces/tenant/leases"),
]


@pytest.mark.parametrize("name", TRAVERSALS)
@pytest.mark.parametrize(("build", "collection"), BUILDERS)
def test_a_traversal_name_is_refused_for_every_kind(
    build: Callable[..., str], collection: str, name: str
) -> None:
    with pytest.raises(paths.InvalidName):
        build("tenant", name)
    with pytest.raises(ValueError):
        build(name, "prompts")
    with pytest.raises(ValueError):
        paths.pod_log(name, "pod")


@given(st.text(min_size=1).filter(lambda name: name not in (".", "..")))
def test_any_other_name_is_one_segment_that_reads_back_as_the_name(name: str) -> None:
    name = name.replace("/", "").replace("%", "") or "x"
    if name in (".", ".."):
        name += "x"
    for build, collection in BUILDERS:
        head, _, last = build("tenant", name).rpartition("/")
        assert head == collection
        assert unquote(last, errors="strict") == name


def test_a_collection_path_names_no_object() -> None:
    assert paths.pod("tenant") == "/api/v1/namespaces/tenant/pods"
    assert paths.pod_log("tenant", "p-a1") == "/api/v1/namespaces/tenant/pods/p-a1/log"
    assert paths.status(paths.phase("tenant", "x")).endswith("/phases/x/status")
    assert (
        paths.config_map("tenant", "a b?c#d")
        == "/api/v1/namespaces/tenant/configmaps/a%20b%3Fc%23d"
    )


def test_the_session_sends_the_path_as_built() -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []

        async def answer(request: web.Request) -> web.Response:
            seen.append(request.raw_path)
            return web.json_response({"kind": "ConfigMap"})

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", answer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        kube = Kube(ApiSession(k8s_client.Configuration(host=f"http://127.0.0.1:{port}"), limit=1))
        try:
            await kube.get(paths.config_map("tenant", "a b?c#d"))
            await kube.get("/api/v1/namespaces/tenant/configmaps/../../victim/secrets/x")
            await kube.list(paths.pod("tenant"), label_selector="a=b")
        finally:
            await kube.close()
            await runner.cleanup()
        return seen

    seen = asyncio.run(scenario())
    assert seen == [
        "/api/v1/namespaces/tenant/configmaps/a%20b%3Fc%23d",
        "/api/v1/namespaces/tenant/configmaps/../../victim/secrets/x",
        "/api/v1/namespaces/tenant/pods?labelSelector=a%3Db",
    ]
