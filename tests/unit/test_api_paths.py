"""R53: an object name cannot change the API path it is put in (adapters/paths.py, kube.py).

Cases: a name with slashes (`../../<namespace>/secrets/<name>`) stays one segment of
its own namespace's collection; so does any text at all (a property test), and the
segment reads back as the name; `.`, `..` and an empty name or namespace are refused;
a `%` is quoted, so a server that decodes once finds no slash; a collection path
names no object; the session sends a path as built, with `..` and `%2F` intact, to
a real HTTP server on loopback.
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
from agentjobs.adapters.kube import ApiSession, Kube

TRAVERSAL = "../../victim/secrets/agentjobs-webhooks"
BUILDERS: list[tuple[Callable[..., str], str]] = [
    (paths.config_map, "/api/v1/namespaces/tenant/configmaps"),
    (paths.secret, "/api/v1/namespaces/tenant/secrets"),
    (paths.pod, "/api/v1/namespaces/tenant/pods"),
    (paths.execution, "/apis/agentjobs.io/v1alpha1/namespaces/tenant/executions"),
    (paths.phase, "/apis/agentjobs.io/v1alpha1/namespaces/tenant/phases"),
    (paths.lease, "/apis/coordination.k8s.io/v1/namespaces/tenant/leases"),
]


@pytest.mark.parametrize(("build", "collection"), BUILDERS)
def test_a_traversal_name_stays_one_segment_of_its_collection(
    build: Callable[..., str], collection: str
) -> None:
    path = build("tenant", TRAVERSAL)
    assert path.startswith(collection + "/")
    last = path.removeprefix(collection + "/")
    assert "/" not in last and unquote(last) == TRAVERSAL


@given(st.text(min_size=1).filter(lambda name: name not in (".", "..")))
def test_any_name_is_one_segment_that_reads_back_as_the_name(name: str) -> None:
    path = paths.secret("tenant", name)
    head, _, last = path.rpartition("/")
    assert head == "/api/v1/namespaces/tenant/secrets"
    assert unquote(last, errors="strict") == name


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_an_empty_dot_or_dot_dot_name_or_namespace_is_refused(name: str) -> None:
    with pytest.raises(paths.InvalidName):
        paths.config_map("tenant", name)
    with pytest.raises(paths.InvalidName):
        paths.config_map(name, "prompts")
    with pytest.raises(ValueError):
        paths.pod_log(name, "pod")


def test_a_percent_is_quoted_so_a_decoding_server_finds_no_slash() -> None:
    last = paths.config_map("tenant", "..%2F..%2Fvictim").rpartition("/")[2]
    assert "/" not in unquote(last) and unquote(last) == "..%2F..%2Fvictim"


def test_a_collection_path_names_no_object_and_a_namespace_is_quoted_too() -> None:
    assert paths.pod("tenant") == "/api/v1/namespaces/tenant/pods"
    assert paths.pod("a/b") == "/api/v1/namespaces/a%2Fb/pods"
    assert paths.pod_log("tenant", "p-a1") == "/api/v1/namespaces/tenant/pods/p-a1/log"
    assert paths.status(paths.phase("tenant", "x")).endswith("/phases/x/status")


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
            await kube.get(paths.config_map("tenant", TRAVERSAL))
            await kube.get("/api/v1/namespaces/tenant/configmaps/../../victim/secrets/x")
            await kube.list(paths.pod("tenant"), label_selector="a=b")
        finally:
            await kube.close()
            await runner.cleanup()
        return seen

    seen = asyncio.run(scenario())
    assert seen == [
        "/api/v1/namespaces/tenant/configmaps/..%2F..%2Fvictim%2Fsecrets%2Fagentjobs-webhooks",
        "/api/v1/namespaces/tenant/configmaps/../../victim/secrets/x",
        "/api/v1/namespaces/tenant/pods?labelSelector=a%3Db",
    ]
