"""The simulated nodes' kubelet endpoint: container logs from kwok, ended as a kubelet ends them.

`python -m devcluster.kwok_logs`. The API server proxies `pods/log` here (the nodes'
InternalIP and daemonEndpoints port). Each request is answered with what kwok's server
serves for it, read to its end without following; a followed log is then held open until
the container has terminated or its pod is gone, and ends there, as the kubelet ends it.
kwok itself would keep a followed log open for ever (it cannot tell that the container
exited), one inotify instance each. Which containers have terminated is learnt from one
watch of the pods bound to each simulated node.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import ssl
from collections.abc import Iterable

import aiohttp
from aiohttp import web

from devcluster.kube_api import ApiError, KubeApi, Obj

logger = logging.getLogger("kwok-logs")
PodKey = tuple[str, str]
CHUNK_BYTES = 64 * 1024


class Terminations:
    """Which containers of the simulated nodes' pods have terminated, as the watch last told.

    A pod's event wakes only the follows of that pod: one condition for all of them woke a
    thousand follows at every pod event of a thousand-phase run.
    """

    def __init__(self) -> None:
        self._terminated: dict[PodKey, set[str]] = {}
        self._waiting: dict[PodKey, dict[str, asyncio.Event]] = {}

    async def record(self, event_type: str, pod: Obj) -> None:
        metadata = pod.get("metadata", {})
        key = (metadata.get("namespace", ""), metadata.get("name", ""))
        if event_type == "DELETED":
            self._terminated[key] = {"*"}  # gone: every container's log has ended
        else:
            statuses = pod.get("status", {}).get("containerStatuses") or []
            self._terminated[key] = {
                s["name"] for s in statuses if "terminated" in (s.get("state") or {})
            }
        waiting = self._waiting.get(key, {})
        for container in [c for c in waiting if self.ended(key, c)]:
            waiting.pop(container).set()
        if not waiting:
            self._waiting.pop(key, None)

    def ended(self, key: PodKey, container: str) -> bool:
        terminated = self._terminated.get(key, set())
        return container in terminated or "*" in terminated

    async def wait_ended(self, key: PodKey, container: str) -> None:
        if not self.ended(key, container):
            waiting = self._waiting.setdefault(key, {})
            await waiting.setdefault(container, asyncio.Event()).wait()


async def watch_node(api: KubeApi, node: str, terminations: Terminations) -> None:
    """Follow the pods bound to `node` for ever, reconnecting when a watch ends."""
    query = {"fieldSelector": f"spec.nodeName={node}"}
    while True:
        try:
            async for event in api.watch("/api/v1/pods", query):
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    await terminations.record(event["type"], event["object"])
        except ApiError as error:
            logger.warning("pod watch of %s ended: %s", node, error)
            await asyncio.sleep(1)


TERMINATIONS_KEY = web.AppKey("terminations", Terminations)
KWOK_URL_KEY = web.AppKey("kwok_url", str)
SESSION_KEY = web.AppKey("session", aiohttp.ClientSession)


async def container_logs(request: web.Request) -> web.StreamResponse:
    info = request.match_info
    key = (info["namespace"], info["pod"])
    query = {name: value for name, value in request.query.items() if name != "follow"}
    follow = request.query.get("follow", "false").lower() in ("true", "1")
    url = f"{request.app[KWOK_URL_KEY]}{request.path}"
    async with request.app[SESSION_KEY].get(url, params=query) as upstream:
        if upstream.status != 200:
            return web.Response(status=upstream.status, body=await upstream.read())
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        async for chunk in upstream.content.iter_chunked(CHUNK_BYTES):
            await response.write(chunk)
    if follow:
        await request.app[TERMINATIONS_KEY].wait_ended(key, info["container"])
    await response.write_eof()
    return response


async def healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


async def serve(arguments: argparse.Namespace) -> None:
    api = await KubeApi.from_kubeconfig(arguments.kubeconfig)
    terminations = Terminations()
    watches = [asyncio.create_task(watch_node(api, n, terminations)) for n in arguments.node]
    app = web.Application()
    app[TERMINATIONS_KEY] = terminations
    app[KWOK_URL_KEY] = arguments.kwok_url.rstrip("/")
    # No pool limit: every followed log holds one connection to kwok while it is read.
    app[SESSION_KEY] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", container_logs)
    app.router.add_get("/healthz", healthz)
    # A handler is cancelled when the API server hangs up, not at its next write.
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
    await runner.setup()
    # Only clients with a certificate from the cluster CA: the API server.
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=arguments.client_ca)
    context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
    context.verify_mode = ssl.CERT_REQUIRED
    await web.TCPSite(runner, arguments.address, arguments.port, ssl_context=context).start()
    try:
        await asyncio.gather(*watches)
    finally:
        await runner.cleanup()
        await app[SESSION_KEY].close()
        await api.close()


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m devcluster.kwok_logs", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    parser.add_argument("--client-ca", required=True)
    parser.add_argument("--kwok-url", required=True, help="kwok's own server, e.g. http://...")
    parser.add_argument("--node", action="append", required=True, help="a simulated node")
    arguments = parser.parse_args(None if argv is None else list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(arguments))


if __name__ == "__main__":
    main()
