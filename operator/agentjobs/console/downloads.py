"""Artifacts through the console, and the two actions it allows (cancel, interrupt).

Downloads are streamed from storage with the console's own storage settings,
which never reach the browser. Every download is an attachment with its
bytes as stored; an artifact is shown in the page only as Markdown rendered
with raw HTML off, or as text, so an HTML or SVG artifact never runs in the
console's origin.
"""

from __future__ import annotations

import asyncio
import urllib.parse

from aiohttp import web

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError
from agentjobs.adapters.object_store import StoredObject
from agentjobs.console import access, pages, permissions, render, transcripts
from agentjobs.console.context import console_of, user_of
from agentjobs.models.storage import ObjectLocation

VIEW_LIMIT = 4 * 1024 * 1024
_TEXT_SUFFIXES = (".txt", ".log", ".json", ".yaml", ".yml", ".csv", ".diff", ".patch", ".py")

routes = web.RouteTableDef()


@routes.get("/executions/{namespace}/{name}/phases/{phase}/artifact")
async def artifact(request: web.Request) -> web.StreamResponse:
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    view = await pages.execution_view(request, permissions.artifacts(namespace))
    phase = pages.phase_of(view, request.match_info["phase"])
    path = request.query.get("path", "")
    found = next((a for a in phase.status.artifacts if a.path == path and a.url), None)
    store = console_of(request).store
    if found is None or found.url is None or store is None:
        raise web.HTTPNotFound(text=f"phase {phase.name} has no stored artifact {path!r}")
    try:
        location = transcripts.stored_location(found.url, namespace=namespace, execution=name)
    except (LookupError, ValueError) as error:
        raise web.HTTPNotFound(text=str(error)) from error
    stored = await asyncio.to_thread(store.open, location)
    if stored is None:
        raise web.HTTPNotFound(text=f"{found.url} is not in storage (any more)")
    try:
        if request.query.get("view") and _viewable(path) and stored.size <= VIEW_LIMIT:
            return await _shown(stored, path, view.row.key, phase.name)
        return await _streamed(request, stored, location)
    finally:
        stored.close()


def _viewable(path: str) -> bool:
    return path.lower().endswith((".md", ".markdown", *_TEXT_SUFFIXES))


async def _shown(stored: StoredObject, path: str, execution: str, phase: str) -> web.Response:
    text = (await asyncio.to_thread(stored.read_all)).decode("utf-8", "replace")
    markdown = path.lower().endswith((".md", ".markdown"))
    body = render.page(
        "artifact.html", path=path, text=text, markdown=markdown, execution=execution, phase=phase
    )
    return web.Response(text=body, content_type="text/html", charset="utf-8")


async def _streamed(
    request: web.Request, stored: StoredObject, location: ObjectLocation
) -> web.StreamResponse:
    filename = location.key.rsplit("/", 1)[-1]
    response = web.StreamResponse(
        headers={
            "Content-Type": "application/octet-stream",
            "Content-Disposition": f"attachment; filename*=UTF-8''{urllib.parse.quote(filename)}",
            "Content-Length": str(stored.size),
        }
    )
    await response.prepare(request)
    while chunk := await asyncio.to_thread(stored.read):
        await response.write(chunk)
    await response.write_eof()
    return response


@routes.post("/executions/{namespace}/{name}/{action:cancel|interrupt}")
async def act(request: web.Request) -> web.Response:
    """Set ``spec.cancel`` or ``spec.interrupt`` (R43, R44), as the user."""
    if (
        request.headers.get("X-Agentjobs-Action") != "1"
    ):  # a page of ours asked, not a form elsewhere
        raise web.HTTPForbidden(text="actions are sent by the console's own page")
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    console, user = console_of(request), user_of(request)
    await access.require(console.access, user, permissions.act(namespace))
    patch = {"spec": {request.match_info["action"]: True}}
    try:
        changed = await access.acting_kube(console.access, user).merge_patch(
            paths.execution(namespace, name), patch
        )
    except ApiError as error:
        if error.status in (401, 403, 422):
            raise access.Refused(403 if error.status != 422 else 422, error.message) from error
        raise
    if changed is None:
        raise web.HTTPNotFound(text=f"execution {namespace}/{name} not found")
    return web.Response(status=204)
