"""The console's pages: the Executions list, an Execution, a phase's conversation."""

from __future__ import annotations

from aiohttp import web

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError
from agentjobs.console import access, permissions, render, rows, transcripts, views
from agentjobs.console.context import Console, console_of, user_of
from agentjobs.contract.conversation.entries import Entry
from agentjobs.contract.conversation.pages import Page
from agentjobs.kube import naming
from agentjobs.models.contract import ExecutionStatus, FailureClassification

routes = web.RouteTableDef()


def filters_of(request: web.Request) -> rows.Filters:
    query = request.query
    return rows.Filters(
        namespace=query.get("namespace", "").strip(),
        status=query.get("status", ""),
        classification=query.get("classification", ""),
        label=query.get("label", "").strip(),
    )


async def visible_rows(
    request: web.Request, filters: rows.Filters
) -> tuple[list[rows.Row], str, str | None]:
    """The rows the user may see, the list's resourceVersion, and a note when all
    namespaces were asked for and the user may list only some (or none)."""
    console, user = console_of(request), user_of(request)
    if filters.namespace:
        await access.require(
            console.access, user, (permissions.list_executions(filters.namespace),)
        )
        listing = await console.access.kube.listing(
            paths.execution(filters.namespace), label_selector=filters.label
        )
        note = None
    else:
        listing, note = await _everywhere(console, user, filters)
    found = [rows.row(item) for item in listing.get("items", [])]
    if not filters.namespace and note is not None:
        found = [r for r in found if await _may_list(console, user, r.namespace)]
    version = str((listing.get("metadata") or {}).get("resourceVersion") or "")
    return rows.newest_first([r for r in found if filters.keeps(r)]), version, note


async def _everywhere(
    console: Console, user: access.User, filters: rows.Filters
) -> tuple[dict[str, object], str | None]:
    """Every namespace's Executions, when the user may list them all; else what the
    console may list, to be kept per namespace, or nothing and a note to choose one."""
    path, selector = paths.all_executions(), filters.label
    if await console.access.allowed(user, permissions.list_executions("")):
        return await console.access.kube.listing(path, label_selector=selector), None
    cannot = f"{user.name} may not list Executions in all namespaces"
    try:
        listing = await console.access.kube.listing(path, label_selector=selector)
    except ApiError as error:
        if not error.forbidden:
            raise
        return {"items": []}, f"{cannot}: choose a namespace."
    return listing, f"{cannot}: those of the namespaces they may list are shown."


async def _may_list(console: Console, user: access.User, namespace: str) -> bool:
    return await console.access.allowed(user, permissions.list_executions(namespace))


@routes.get("/")
async def home(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("/executions")


@routes.get("/executions")
async def executions(request: web.Request) -> web.Response:
    filters = filters_of(request)
    found, version, note = await visible_rows(request, filters)
    return _html(
        render.page(
            "executions.html",
            rows=found,
            filters=filters,
            version=version,
            note=note,
            statuses=[s.value for s in ExecutionStatus],
            classifications=[c.value for c in FailureClassification],
            query=request.query_string,
        )
    )


async def execution_view(
    request: web.Request, checks: tuple[permissions.Check, ...]
) -> views.ExecutionView:
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    console = console_of(request)
    await access.require(console.access, user_of(request), checks)
    execution = await console.access.kube.get(paths.execution(namespace, name))
    if execution is None:
        raise web.HTTPNotFound(text=f"execution {namespace}/{name} not found")
    selector = f"{naming.LABEL_EXECUTION}={naming.label_value(name)}"
    phases = await console.access.kube.list(paths.phase(namespace), label_selector=selector)
    return views.execution_view(execution, phases)


@routes.get("/executions/{namespace}/{name}")
async def execution(request: web.Request) -> web.Response:
    namespace = request.match_info["namespace"]
    view = await execution_view(request, permissions.execution_page(namespace))
    return _html(render.page("execution.html", view=view))


def phase_of(view: views.ExecutionView, name: str) -> views.PhaseView:
    for phase in view.phases:
        if phase.name == name:
            return phase
    raise web.HTTPNotFound(text=f"execution {view.row.key} has no phase {name!r}")


@routes.get("/executions/{namespace}/{name}/phases/{phase}/attempts/{attempt:[0-9]+}")
async def conversation(request: web.Request) -> web.Response:
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    view = await execution_view(request, permissions.conversation(namespace))
    phase = phase_of(view, request.match_info["phase"])
    number = int(request.match_info["attempt"])
    record = next((a for a in phase.attempts if a.number == number), None)
    page: Page | None = None
    live = False
    if record is not None and record.transcript is not None:
        store = console_of(request).store
        if store is None:
            raise web.HTTPNotFound(
                text="the console has no storage settings: stored transcripts cannot be read"
            )
        start = _start(request.query.get("from", "0"))
        try:
            location = transcripts.stored_location(
                record.transcript.url, namespace=namespace, execution=name
            )
            page = await transcripts.stored_page(
                store, location, phase.transcript_format, start=start, size=record.transcript.size
            )
        except LookupError as error:
            raise web.HTTPNotFound(text=str(error)) from error
    elif number == phase.running_attempt:
        live = True
    else:
        raise web.HTTPNotFound(
            text=f"attempt {number} of phase {phase.name} has no transcript to show"
        )
    entries: list[tuple[int, Entry]] = list(enumerate(page.entries)) if page else []
    return _html(
        render.page(
            "conversation.html",
            view=view,
            phase=phase,
            number=number,
            record=record,
            page=page,
            entries=entries,
            live=live,
            request_path=request.path,
        )
    )


def _start(value: str) -> int:
    if not value.isdigit():
        raise web.HTTPBadRequest(text="'from' is a byte offset")
    return int(value)


def _html(body: str) -> web.Response:
    return web.Response(text=body, content_type="text/html", charset="utf-8")
