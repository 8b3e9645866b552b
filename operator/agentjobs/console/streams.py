"""Server-sent events: the Executions list and a running agent's conversation, live.

The list's page carries the resourceVersion its rows were read at; its stream
watches from there, so no change between the page and the stream is lost. A
watch the API server ends is started again from the last version seen; one
too old to resume (410) lists again and replaces every row.
"""

from __future__ import annotations

import json

from aiohttp import web

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError
from agentjobs.console import access, pages, permissions, render, rows, transcripts
from agentjobs.console.context import console_of, user_of

# A page that has followed this much of a run has more than a reader can use: it stops and
# says so, rather than grow without end in the browser.
LIVE_SENT_LIMIT = 32 * 1024 * 1024
TOO_MUCH = "this page has shown 32 MiB of the run; reload it to follow the latest lines"

routes = web.RouteTableDef()


async def _opened(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"}
    )
    await response.prepare(request)
    return response


async def _send(response: web.StreamResponse, event: str, data: object) -> None:
    await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())


@routes.get("/executions-events")
async def executions_events(request: web.Request) -> web.StreamResponse:
    filters = pages.filters_of(request)
    console, user = console_of(request), user_of(request)
    version = request.query.get("version", "")
    if filters.namespace:
        await access.require(
            console.access, user, (permissions.list_executions(filters.namespace),)
        )
    path = paths.execution(filters.namespace) if filters.namespace else paths.all_executions()
    everywhere = filters.namespace or await console.access.allowed(
        user, permissions.list_executions("")
    )
    response = await _opened(request)
    try:
        await _follow(request, response, filters, path, version, everywhere=bool(everywhere))
    except ApiError as error:
        await _send(response, "failed", {"message": error.message})
    except ConnectionResetError:
        pass  # the browser went away
    return response


async def _follow(
    request: web.Request,
    response: web.StreamResponse,
    filters: rows.Filters,
    path: str,
    version: str,
    *,
    everywhere: bool,
) -> None:
    console, user = console_of(request), user_of(request)
    while True:
        if not version:
            found, version, _ = await pages.visible_rows(request, filters)
            html = "".join(render.fragment("macros.html", "row", r) for r in found)
            await _send(response, "reset", {"html": html})
        try:
            async for event in console.access.kube.watch(
                path, resource_version=version, label_selector=filters.label
            ):
                item = event.get("object") or {}
                version = str((item.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") == "BOOKMARK":
                    continue
                row = rows.row(item)
                if not everywhere and not await console.access.allowed(
                    user, permissions.list_executions(row.namespace)
                ):
                    continue
                if event.get("type") == "DELETED" or not filters.keeps(row):
                    await _send(response, "remove", {"key": row.key})
                else:
                    html = render.fragment("macros.html", "row", row)
                    await _send(response, "row", {"key": row.key, "html": html})
        except ApiError as error:
            if error.status != 410:
                raise
            version = ""  # too old to resume: list again


@routes.get("/executions/{namespace}/{name}/phases/{phase}/attempts/{attempt:[0-9]+}/events")
async def conversation_events(request: web.Request) -> web.StreamResponse:
    namespace = request.match_info["namespace"]
    view = await pages.execution_view(request, permissions.conversation(namespace))
    phase = pages.phase_of(view, request.match_info["phase"])
    number = int(request.match_info["attempt"])
    if number != phase.running_attempt or not phase.status.pod_name:
        raise web.HTTPNotFound(text=f"attempt {number} of phase {phase.name} is not running")
    console = console_of(request)
    response = await _opened(request)
    sent = 0
    try:
        async for changes in transcripts.live(
            console.access.kube, namespace, phase.status.pod_name, phase.transcript_format
        ):
            for index, entry in changes:
                html = render.fragment("macros.html", "entry", index, entry)
                await _send(response, "entry", {"index": index, "html": html})
                sent += len(html)
            if sent > LIVE_SENT_LIMIT:
                await _send(response, "failed", {"message": TOO_MUCH})
                return response
        await _send(response, "ended", {})
    except ApiError as error:
        await _send(response, "failed", {"message": error.message})
    except ConnectionResetError:
        pass  # the browser went away
    return response
