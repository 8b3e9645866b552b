"""The Kubernetes API, as plain JSON dicts over aiohttp, authenticated as kubernetes_asyncio's
configuration says (the in-cluster service account, or a kubeconfig).

Objects go in and come out as the API's own JSON, so that the models parse
them by alias and nothing depends on the generated client classes. Errors are
sorted here into the few cases callers act on: missing, already there,
conflict, forbidden; anything else is raised as :class:`ApiError`.

Log follows hold their connection for as long as the container runs, so they
have a connection pool of their own (an :class:`ApiSession`), without a cap: a thousand
of them never make a status write wait for a free connection, nor each other.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import orjson

from agentjobs.adapters import metrics, paths, tls_read_buffer
from agentjobs.adapters.api_session import ApiSession, configuration, streamed
from agentjobs.kube.log_timestamps import NotALogLine, TimestampedLog

JsonObject = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
REQUEST_CONNECTIONS = 100


class ApiError(Exception):
    """An API request that failed; ``status`` is the HTTP status (0 for no answer)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message

    @property
    def forbidden(self) -> bool:
        return self.status == 403


async def _api_error(response: aiohttp.ClientResponse) -> ApiError:
    text = await response.text()
    try:
        body = json.loads(text)
        message, reason = body.get("message", text), body.get("reason", response.reason or "")
    except ValueError:
        message, reason = text, response.reason or ""
    metrics.api_errors.labels(str(response.status)).inc()
    return ApiError(response.status, str(reason), str(message))


class Kube:
    """Authenticated access to the API server: requests on one pool, log streams on another."""

    _bearer: str | None = None

    def __init__(self, api: ApiSession, streams: ApiSession | None = None) -> None:
        self._api = api
        self._streams = streams or api

    @classmethod
    async def connect(cls, kubeconfig: str | None = None) -> Kube:
        """Connect as :func:`configuration` finds."""
        found = await configuration(kubeconfig)
        # asyncio gave every TLS connection a 256 KiB read buffer of its own: a thousand
        # log streams held 250 MiB in them.
        tls_read_buffer.share_read_buffers()
        return cls(ApiSession(found, limit=REQUEST_CONNECTIONS), ApiSession(found, limit=0))

    async def close(self) -> None:
        await self._api.close()
        if self._streams is not self._api:
            await self._streams.close()

    async def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: aiohttp.ClientTimeout | None = None,
        stream: bool = False,
    ) -> aiohttp.ClientResponse:
        session = self._streams if stream else self._api
        return await session.request(
            method,
            path,
            query=query or {},
            body=body,
            content_type=content_type,
            timeout=timeout or aiohttp.ClientTimeout(total=60),
            bearer=self._bearer,
        )

    async def _json(self, method: str, path: str, **kwargs: Any) -> JsonObject:
        response = await self._request(method, path, **kwargs)
        async with response:
            if response.status >= 400:
                raise await _api_error(response)
            # orjson: twice as fast as json on the API's answers, the operator's commonest
            # decode after kopf's watch lines (the API server sends only valid UTF-8).
            result: JsonObject = await response.json(loads=orjson.loads)
            return result

    async def get(self, path: str) -> JsonObject | None:
        """The object at ``path``, or None when it does not exist."""
        try:
            return await self._json("GET", path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def list(self, path: str, *, label_selector: str) -> list[JsonObject]:
        listing = await self._json("GET", path, query={"labelSelector": label_selector})
        items: list[JsonObject] = listing.get("items", [])
        return items

    async def listing(self, path: str, *, label_selector: str = "") -> JsonObject:
        """The list at ``path`` whole: its ``items`` and the ``metadata.resourceVersion`` a
        watch of it starts from."""
        return await self._json("GET", path, query={"labelSelector": label_selector})

    async def watch(
        self, path: str, *, resource_version: str, label_selector: str = ""
    ) -> AsyncIterator[JsonObject]:
        """The watch events (``type``, ``object``) after ``resource_version``, until the API
        server ends the watch (a few minutes; the caller lists again). An expired version
        raises ApiError 410."""
        query = {
            "watch": "true",
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "allowWatchBookmarks": "true",
        }
        timeout = aiohttp.ClientTimeout(total=None, connect=30, sock_read=None)
        response = await self._request("GET", path, query=query, timeout=timeout, stream=True)
        async with streamed(response):
            if response.status >= 400:
                raise await _api_error(response)
            pending = b""  # one event is one line, which may be longer than a read
            async for chunk in response.content.iter_any():
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if line.strip():
                        yield _watch_event(orjson.loads(line))

    async def review(self, path: str, body: JsonObject) -> JsonObject:
        """Create a review (TokenReview, SubjectAccessReview): the API's answer, its status."""
        return await self._json("POST", path, body=body)

    def as_bearer(self, token: str) -> Kube:
        """This connection, sending ``token`` as each request's credential: the console acts
        as the user who gave it (a session with a client certificate would still be itself,
        so the console runs with a token)."""
        return _BearerKube(self._api, self._streams, token)

    async def create(self, path: str, body: JsonObject) -> JsonObject | None:
        """Create ``body``; None when an object of that name already exists (whose it is, is
        for the caller to find out)."""
        try:
            return await self._json("POST", path, body=body)
        except ApiError as error:
            if error.status == 409 and error.reason == "AlreadyExists":
                return None
            raise

    async def merge_patch(self, path: str, patch: JsonObject) -> JsonObject | None:
        """Apply a JSON merge patch; None when the object is gone."""
        try:
            return await self._json("PATCH", path, body=patch, content_type=MERGE_PATCH)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def remove_finalizer(self, path: str, finalizer: str, *, uid: str) -> None:
        """Remove ``finalizer`` from a built-in object (still the one with ``uid``), leaving
        any other finalizer alone; nothing when the object is gone or was replaced."""
        patch = {
            "metadata": {"uid": uid, "$deleteFromPrimitiveList/finalizers": [finalizer]},
        }
        try:
            await self._json("PATCH", path, body=patch, content_type=STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            if error.status not in (404, 409):
                raise

    async def replace(self, path: str, body: JsonObject) -> JsonObject | None:
        """Write ``body`` over the object (PUT); None when the object changed since ``body``'s
        ``metadata.resourceVersion`` was read (another writer was first) or is gone."""
        try:
            return await self._json("PUT", path, body=body)
        except ApiError as error:
            if error.status in (404, 409):
                return None
            raise

    def fenced(self, check: Callable[[], None]) -> Kube:
        """This connection, calling ``check`` before each request it sends; ``check`` raises
        to refuse one (e.g. from a replica that is no longer the leader)."""
        return _FencedKube(self._api, self._streams, check)

    async def delete(
        self, path: str, *, grace_period_seconds: int | None = None, uid: str | None = None
    ) -> None:
        """Delete, if it still exists (and is still the object with ``uid``)."""
        options: JsonObject = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if uid is not None:
            options["preconditions"] = {"uid": uid}
        try:
            await self._json("DELETE", path, body=options)
        except ApiError as error:
            if error.status not in (404, 409):
                raise

    async def log_tail(self, namespace: str, pod: str, container: str) -> str:
        """The last line a container logged ("" when there is none or it cannot be read, R76)."""
        path = paths.pod_log(namespace, pod)
        query = {
            "container": container,
            "tailLines": "1",
            "limitBytes": "2048",
            "timestamps": "true",
        }
        response = await self._request("GET", path, query=query)
        async with response:
            if response.status >= 400:
                return ""
            log = TimestampedLog()
            try:
                line = log.feed(await response.read())
                log.close()
            except NotALogLine:
                return ""
            return line.decode(errors="replace").strip()

    async def stream_log(
        self,
        namespace: str,
        pod: str,
        container: str,
        *,
        follow: bool,
        idle_seconds: float,
        tail_lines: int | None = None,
    ) -> AsyncIterator[bytes]:
        """A container's log from its first byte (or its last ``tail_lines`` lines), followed
        or as it stands; the iterator ends when the stream does. A stream silent for
        ``idle_seconds`` raises a timeout (its connection's keepalive finds a vanished peer
        sooner). Only lines the container wrote are yielded: text the node put in the answer
        raises an :class:`ApiError` (R76)."""
        path = paths.pod_log(namespace, pod)
        query = {
            "container": container,
            "follow": "true" if follow else "false",
            "timestamps": "true",
        }
        if tail_lines is not None:
            query["tailLines"] = str(tail_lines)
        timeout = aiohttp.ClientTimeout(total=None, connect=30, sock_read=idle_seconds)
        response = await self._request("GET", path, query=query, timeout=timeout, stream=True)
        log = TimestampedLog()
        async with streamed(response):
            if response.status >= 400:
                raise await _api_error(response)
            try:
                async for chunk in response.content.iter_any():
                    if written := log.feed(chunk):
                        yield written
                log.close()
            except NotALogLine as error:  # its status says 200: it failed all the same
                raise ApiError(response.status, "NotALogLine", str(error)) from None


class _FencedKube(Kube):
    def __init__(self, api: ApiSession, streams: ApiSession, check: Callable[[], None]) -> None:
        super().__init__(api, streams)
        self._check = check

    async def _request(self, method: str, path: str, **kwargs: Any) -> aiohttp.ClientResponse:
        self._check()
        return await super()._request(method, path, **kwargs)


def _watch_event(event: JsonObject) -> JsonObject:
    if event.get("type") == "ERROR":
        status = event.get("object") or {}
        code, reason = int(status.get("code") or 0), str(status.get("reason") or "")
        raise ApiError(code, reason, str(status.get("message") or ""))
    return event


class _BearerKube(Kube):
    def __init__(self, api: ApiSession, streams: ApiSession, bearer: str) -> None:
        super().__init__(api, streams)
        self._bearer = bearer

    async def close(self) -> None:
        """Nothing: the sessions are its origin's."""
