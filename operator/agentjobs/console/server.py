"""The console's web application: who is asking, what every response carries, and the routes.

Each request but the static files, signing in and out and ``/healthz`` is
attributed to a user first (401 otherwise). Every response is sent with a
Content-Security-Policy that loads and runs only the console's own files, so
nothing a tenant or an agent wrote can run in the page.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

from agentjobs.adapters.kube import ApiError
from agentjobs.adapters.paths import InvalidName
from agentjobs.adapters.store_common import StorageError
from agentjobs.console import downloads, pages, render, streams
from agentjobs.console.access import Refused
from agentjobs.console.context import CONSOLE, Console, console_of

TOKEN_COOKIE = "agentjobs-token"
STATIC = Path(__file__).parent / "static"
_OPEN = ("/static/", "/login", "/logout", "/healthz")
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        return header[7:].strip() or None
    return request.cookies.get(TOKEN_COOKIE) or None


def _same_origin(request: web.Request) -> bool:
    """A browser names the page a POST comes from; it must be one of ours (behind a proxy
    the scheme may differ, the host may not)."""
    origin = request.headers.get("Origin")
    return origin is None or urllib.parse.urlsplit(origin).netloc == request.host


def _error(status: int, message: str, *, sign_in: bool = False) -> web.Response:
    body = render.page("error.html", status=status, message=message, sign_in=sign_in)
    return web.Response(status=status, text=body, content_type="text/html", charset="utf-8")


@web.middleware
async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
    console = console_of(request)
    try:
        if request.method == "POST" and not _same_origin(request):
            raise Refused(403, "a form or script of another site may not act here")
        if not request.path.startswith(_OPEN):
            request["user"] = await console.access.user(_token(request))
        response = await handler(request)
    except Refused as refused:
        response = _error(refused.status, str(refused), sign_in=refused.status == 401)
    except web.HTTPException as error:
        if error.status < 400:
            raise
        response = _error(error.status, error.text or error.reason)
    except InvalidName as error:
        response = _error(404, str(error))
    except ApiError as error:
        # What the user asked for (a label selector that does not parse) is theirs to fix:
        # 400; what the API server refuses or cannot find, as it said; anything else is ours.
        status = 400 if error.status in (400, 422) else error.status
        status = status if status in (400, 403, 404) else 502
        response = _error(status, f"the Kubernetes API answered {error}")
    except StorageError as error:
        response = _error(502, f"the object store answered: {error}")
    return response


async def _secured(request: web.Request, response: web.StreamResponse) -> None:
    """Every response, streamed ones too, with the headers that keep it to itself."""
    response.headers.update(SECURITY_HEADERS)


async def login_page(request: web.Request) -> web.Response:
    if not console_of(request).user_tokens:
        raise web.HTTPFound("/executions")
    body = render.page("login.html", failed=False)
    return web.Response(text=body, content_type="text/html", charset="utf-8")


async def login(request: web.Request) -> web.StreamResponse:
    """Check the token as any request's, then keep it in a cookie no script can read."""
    token = str((await request.post()).get("token", "")).strip()
    console = console_of(request)
    try:
        await console.access.user(token)
    except Refused:
        body = render.page("login.html", failed=True)
        return web.Response(status=401, text=body, content_type="text/html", charset="utf-8")
    response = web.Response(status=302, headers={"Location": "/executions"})
    response.set_cookie(
        TOKEN_COOKIE, token, httponly=True, samesite="Strict", secure=request.secure, path="/"
    )
    return response


async def logout(request: web.Request) -> web.StreamResponse:
    response = web.Response(status=302, headers={"Location": "/login"})
    response.del_cookie(TOKEN_COOKIE, path="/")
    return response


async def healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def application(console: Console) -> web.Application:
    render.set_user_tokens(console.user_tokens)
    app = web.Application(middlewares=[guarded])
    app[CONSOLE] = console
    app.on_response_prepare.append(_secured)
    app.add_routes(pages.routes)
    app.add_routes(streams.routes)
    app.add_routes(downloads.routes)
    app.router.add_get("/login", login_page)
    app.router.add_post("/login", login)
    app.router.add_post("/logout", logout)
    app.router.add_get("/healthz", healthz)
    app.router.add_static("/static/", STATIC)
    return app


async def serve(console: Console, *, host: str, port: int) -> None:
    """Serve until cancelled."""
    # A page's event stream holds an API watch: when its browser goes away, the handler is
    # cancelled then, not at its next write, which a quiet namespace may never bring.
    runner = web.AppRunner(application(console), access_log=None, handler_cancellation=True)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
