"""The kubelet's HTTPS endpoint, as far as the API server needs it: container logs."""

from __future__ import annotations

import ssl
import time
from pathlib import Path

from aiohttp import web

from . import control
from .logs import LogOptions, parse_timestamp, stream_log
from .node import Node
from .pod import log_path
from .streams import StreamDropped, StreamIdle, shaped

NODE_KEY = web.AppKey("node", Node)


def _flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


def _integer(request: web.Request, name: str) -> int | None:
    value = request.query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as error:
        raise web.HTTPBadRequest(text=f"invalid {name}: {value!r}") from error


def log_options(request: web.Request) -> LogOptions:
    since_ns: int | None = None
    since_seconds = _integer(request, "sinceSeconds")
    if since_seconds is not None:
        since_ns = time.time_ns() - since_seconds * 1_000_000_000
    if request.query.get("sinceTime"):
        try:
            since_ns = parse_timestamp(request.query["sinceTime"])
        except ValueError as error:
            raise web.HTTPBadRequest(text="invalid sinceTime") from error
    return LogOptions(
        follow=_flag(request, "follow"),
        timestamps=_flag(request, "timestamps"),
        since_ns=since_ns,
        tail_lines=_integer(request, "tailLines"),
        limit_bytes=_integer(request, "limitBytes"),
    )


def _select_log(node: Node, namespace: str, pod: str, container: str, previous: bool) -> Path:
    worker = node.find_pod(namespace, pod)
    if worker is None:
        raise web.HTTPNotFound(text=f'pod "{pod}" not found')
    record = worker.record.find(container)
    if record is None:
        raise web.HTTPBadRequest(text=f'container "{container}" in pod "{pod}" is not valid')
    instance = record.instances - (2 if previous else 1)
    if previous and instance < 0:
        raise web.HTTPBadRequest(
            text=f'previous terminated container "{container}" in pod "{pod}" not found'
        )
    if instance < 0:
        raise web.HTTPBadRequest(
            text=f'container "{container}" in pod "{pod}" is waiting to '
            f"start: {record.waiting_reason}"
        )
    path = log_path(worker.dir, container, instance)
    if not path.exists():
        raise web.HTTPNotFound(text=f'log of container "{container}" in pod "{pod}" not found')
    return path


async def container_logs(request: web.Request) -> web.StreamResponse:
    node = request.app[NODE_KEY]
    info = request.match_info
    path = _select_log(
        node, info["namespace"], info["pod"], info["container"], _flag(request, "previous")
    )
    options = log_options(request)
    key = (info["namespace"], info["pod"])
    chunks = stream_log(path, node.ctx.live_logs.get(str(path)), options)
    if options.follow:
        idle = node.streams.idle_timeout_for(key)
        chunks = shaped(chunks, idle, node.streams.take_drop((*key, info["container"])))
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    await response.prepare(request)
    try:
        async for chunk in chunks:
            await response.write(chunk)
    except StreamDropped:
        if request.transport is not None:
            request.transport.abort()
        return response
    except StreamIdle:
        # Idle for streamingConnectionIdleTimeout: the connection is closed, the log not ended.
        if request.transport is not None:
            request.transport.close()
        return response
    except (ConnectionResetError, ConnectionError):
        return response
    await response.write_eof()
    return response


async def healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def make_app(node: Node) -> web.Application:
    app = web.Application()
    app[NODE_KEY] = node
    app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", container_logs)
    app.router.add_get("/healthz", healthz)
    control.add_routes(app, node)
    return app


def server_ssl_context(cert: str, key: str, client_ca: str) -> ssl.SSLContext:
    """TLS that only lets in clients with a certificate from the cluster CA."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=client_ca)
    context.load_cert_chain(cert, key)
    context.verify_mode = ssl.CERT_REQUIRED
    return context


async def start_server(
    node: Node, address: str, port: int, context: ssl.SSLContext
) -> web.AppRunner:
    # Cancel a follower's handler when the API server hangs up, not at the next write.
    runner = web.AppRunner(make_app(node), access_log=None, handler_cancellation=True)
    await runner.setup()
    await web.TCPSite(runner, address, port, ssl_context=context).start()
    return runner
