"""Test knobs on the node's HTTPS server: POST /devcluster/<knob> with a JSON body.

Only the cluster admin's client certificate may use them (the API server's
kubelet client may not), and the server listens on loopback only. An HTTP
endpoint rather than a watched control file: a call takes effect before it
returns, and a mistake (an unknown pod) comes back as an error to the test.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:  # the node module imports the server's handlers' types, not the other way
    from .node import Node

Obj = dict[str, Any]
ADMIN_COMMON_NAME = "admin"
DEFAULT_EVICTION_MESSAGE = "The node was low on resource: memory. "


def _common_name(request: web.Request) -> str | None:
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if not isinstance(ssl_object, ssl.SSLObject):
        return None
    certificate: Any = ssl_object.getpeercert() or {}
    for rdn in certificate.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


async def _body(request: web.Request) -> Obj:
    if _common_name(request) != ADMIN_COMMON_NAME:
        raise web.HTTPForbidden(text="the node's test knobs are for the cluster admin only")
    try:
        body = await request.json()
    except ValueError as error:
        raise web.HTTPBadRequest(text="expected a JSON object") from error
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="expected a JSON object")
    return body


def _field(body: Obj, name: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
    value = body.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise web.HTTPBadRequest(text=f"{name}: expected {kind}")
    return value


Handler = Callable[[web.Request], Awaitable[web.Response]]


def _handlers(node: Node) -> dict[str, Handler]:
    async def evict(request: web.Request) -> web.Response:
        body = await _body(request)
        namespace, pod = _field(body, "namespace", str), _field(body, "pod", str)
        worker = node.find_pod(namespace, pod)
        if worker is None:
            raise web.HTTPNotFound(text=f"pod {namespace}/{pod} is not on this node")
        message = _field(body, "message", str, optional=True) or DEFAULT_EVICTION_MESSAGE
        grace = _field(body, "gracePeriodSeconds", int, optional=True)
        if not worker.evict(message, float(1 if grace is None else grace)):
            raise web.HTTPConflict(text=f"pod {namespace}/{pod} has already terminated")
        return web.json_response({"evicted": f"{namespace}/{pod}"})

    async def heartbeats(request: web.Request) -> web.Response:
        body = await _body(request)
        if _field(body, "paused", bool):
            node.heartbeat.pause()
        else:
            node.heartbeat.resume()
        return web.json_response({"paused": node.heartbeat.paused})

    async def log_drops(request: web.Request) -> web.Response:
        body = await _body(request)
        key = (_field(body, "namespace", str), _field(body, "pod", str))
        container = _field(body, "container", str)
        after = _field(body, "afterBytes", int)
        times = _field(body, "times", int, optional=True)
        node.streams.set_drop((*key, container), after, times)
        return web.json_response({"afterBytes": after, "times": times})

    async def log_max_size(request: web.Request) -> web.Response:
        body = await _body(request)
        key = (_field(body, "namespace", str), _field(body, "pod", str))
        size = _field(body, "bytes", int, optional=True)
        if size is None:
            node.ctx.logs.pod_max_size.pop(key, None)
        else:
            node.ctx.logs.pod_max_size[key] = size
        return web.json_response({"bytes": size})

    async def stream_idle_timeout(request: web.Request) -> web.Response:
        body = await _body(request)
        key = (_field(body, "namespace", str), _field(body, "pod", str))
        seconds = _field(body, "seconds", (int, float), optional=True)
        if seconds is None:
            node.streams.pod_idle_timeout.pop(key, None)
        else:
            node.streams.pod_idle_timeout[key] = float(seconds)
        return web.json_response({"seconds": seconds})

    return {
        "evict": evict,
        "heartbeats": heartbeats,
        "log-drops": log_drops,
        "log-max-size": log_max_size,
        "stream-idle-timeout": stream_idle_timeout,
    }


def add_routes(app: web.Application, node: Node) -> None:
    for name, handler in _handlers(node).items():
        app.router.add_post(f"/devcluster/{name}", handler)
