"""The credentials endpoint: phase sidecars trade their attempt's token for presigned URLs.

The sidecars hold no storage credentials. They POST ``/v1/presign`` with
``Authorization: Bearer <token>`` and ``{"objects": [{"method", "bucket",
"key"}, ...]}`` (within :mod:`agentjobs.models.presign`'s limits on objects and
bytes, shared with the client), and get one URL per object, or a refusal
naming the first object refused. The token's signature, expiry and
grants are checked on every request (:mod:`agentjobs.contract.artifacts.credentials`); so
is the admin's bucket allow-list, and that the token's attempt is still the
Phase's live one: a token stops working once its phase has ended or a later
attempt has begun. That check reads the Phase at most once per
``PHASE_CHECK_SECONDS`` per phase (the harvester asks for URLs only for new
files and caches them), so the API server hardly notices it. Tokens and
URLs are never logged (aiohttp's access log is off).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from agentjobs.adapters import paths, tls_identity
from agentjobs.adapters.kube import ApiError, Kube
from agentjobs.adapters.object_store import ObjectStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.adapters.tls_identity import TlsIdentity
from agentjobs.contract.artifacts import credentials
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.contract.phase import phase_status
from agentjobs.models import presign
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.storage import ObjectLocation
from agentjobs.runtime.config import CredentialsEndpoint

logger = logging.getLogger(__name__)
URL_SECONDS = 900
PHASE_CHECK_SECONDS = 5.0


class ListenFailed(Exception):
    """The endpoint's address cannot be had: the operator must not start without it."""


@dataclass(frozen=True)
class _Requested:
    method: credentials.Method
    location: ObjectLocation


def _requested(body: Any) -> list[_Requested]:
    items = body.get("objects") if isinstance(body, dict) else None
    if not isinstance(items, list) or not 0 < len(items) <= presign.MAX_OBJECTS:
        raise ValueError(f"expected {{'objects': [...]}} with 1 to {presign.MAX_OBJECTS} objects")
    requested = []
    for item in items:
        if not isinstance(item, dict) or item.get("method") not in ("GET", "PUT"):
            raise ValueError("each object needs a method, GET or PUT")
        bucket, key = item.get("bucket"), item.get("key")
        if not isinstance(bucket, str) or not isinstance(key, str):
            raise ValueError("each object needs a bucket and a key")
        requested.append(_Requested(item["method"], ObjectLocation(bucket, key)))
    return requested


class _LiveAttempts:
    """Whether a token's attempt is still its Phase's live one, read with little API load."""

    def __init__(self, kube: Kube) -> None:
        self._kube = kube
        self._checked: dict[tuple[str, str, str, int], tuple[bool, float]] = {}

    async def live(self, claims: credentials.Claims) -> bool:
        key = (claims.namespace, claims.phase, claims.phase_uid, claims.attempt)
        known = self._checked.get(key)
        now = time.monotonic()
        if known is not None and (not known[0] or now - known[1] < PHASE_CHECK_SECONDS):
            return known[0]
        body = await self._kube.get(paths.phase(claims.namespace, claims.phase))
        live = body is not None and body["metadata"].get("uid") == claims.phase_uid
        if body is not None and live:
            status = PhaseResourceStatus.model_validate(body.get("status") or {})
            later_attempt = status.attempt is not None and status.attempt > claims.attempt
            live = not phase_status.is_terminal(status) and not later_attempt
        if len(self._checked) > 10_000:
            self._checked.clear()
        self._checked[key] = (live, now)
        return live


class CredentialService:
    """Issues tokens for attempts, and serves presigned URLs to their holders."""

    def __init__(
        self,
        kube: Kube,
        store: ObjectStore,
        policy: BucketPolicy,
        *,
        key: bytes,
        tls: TlsIdentity,
        endpoint: CredentialsEndpoint,
    ) -> None:
        self._store = store
        self._policy = policy
        self._key = key
        self._tls = tls
        self._endpoint = endpoint
        self._attempts = _LiveAttempts(kube)
        self._runner: web.AppRunner | None = None
        self.url = endpoint.url or ""

    @property
    def ca_pem(self) -> str:
        return self._tls.ca_pem

    def issue(self, claims: credentials.Claims) -> str:
        return credentials.sign(claims, self._key)

    async def start(self) -> None:
        app = web.Application(client_max_size=presign.MAX_BODY_BYTES)  # larger: 413
        app.router.add_post(presign.PRESIGN_PATH, self._presign)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        # Never SO_REUSEPORT: two operators on one host would split the pods' requests and
        # judge each other's tokens by their own allow-list. Replicas run in pods of their own.
        site = web.TCPSite(
            self._runner,
            self._endpoint.host,
            self._endpoint.port,
            ssl_context=self._tls.server_context(),
            reuse_port=False,
        )
        try:
            await site.start()
        except OSError as error:
            await self._runner.cleanup()
            self._runner = None
            raise ListenFailed(
                f"the credentials endpoint cannot listen on {self._endpoint.host}:"
                f"{self._endpoint.port}: {error.strerror or error}; another process (another "
                "operator?) may hold it: give --credentials-listen a free port, or port 0 for "
                "any"
            ) from None
        port = self._runner.addresses[0][1]
        if not self._endpoint.url:
            host = self._endpoint.host
            self.url = f"https://{f'[{host}]' if ':' in host else host}:{port}"
        logger.info("credentials endpoint listening on port %d, pods use %s", port, self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _presign(self, request: web.Request) -> web.Response:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        try:
            if scheme != "Bearer":
                raise credentials.InvalidToken("no bearer token")
            claims = credentials.verify(token.strip(), self._key, now=time.time())
        except credentials.InvalidToken as error:
            return _refusal(401, str(error))
        try:
            requested = _requested(await request.json())
        except ValueError as error:
            return _refusal(400, str(error))
        try:
            for item in requested:
                credentials.check(claims, item.method, item.location.bucket, item.location.key)
                if not self._policy.allows(item.location.bucket):
                    raise credentials.AccessDenied(self._policy.refusal(item.location.bucket))
        except credentials.AccessDenied as error:
            return _refusal(403, str(error))
        try:
            live = await self._attempts.live(claims)
        except (ApiError, aiohttp.ClientError, TimeoutError) as error:
            logger.warning("checking phase %s/%s: %s", claims.namespace, claims.phase, error)
            return _refusal(503, "the API server is unavailable")
        if not live:
            return _refusal(403, "this attempt has ended: its token is no longer valid")
        try:
            urls = await asyncio.to_thread(self._urls, requested)
        except StorageError as error:
            logger.warning("presigning for %s/%s: %s", claims.namespace, claims.phase, error)
            return _refusal(503, "storage unavailable")
        return web.json_response({"urls": urls, "expiresInSeconds": URL_SECONDS})

    def _urls(self, requested: list[_Requested]) -> list[str]:
        return [
            self._store.presigned_url(item.method, item.location, seconds=URL_SECONDS)
            for item in requested
        ]


def _refusal(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def build(
    kube: Kube, store: ObjectStore, policy: BucketPolicy, endpoint: CredentialsEndpoint
) -> CredentialService:
    """The service with keys derived from the operator's S3 secret, so that every replica
    signs and serves alike and a restart keeps the tokens and CA that pods hold valid."""
    settings = store.settings
    secret = f"{settings.access_key}:{settings.secret_key}".encode()
    if not settings.secret_key:
        logger.warning("no S3 secret key: tokens and certificate last only this process")
        secret = secrets.token_bytes(32)
    if endpoint.tls_cert is not None and endpoint.tls_key is not None:
        tls = tls_identity.from_files(endpoint.tls_cert, endpoint.tls_key, endpoint.tls_ca)
    else:
        hosts = [urlsplit(endpoint.url).hostname or ""] if endpoint.url else []
        tls = tls_identity.derived(
            credentials.derive_key(secret, "tls"), [h for h in [*hosts, endpoint.host] if h]
        )
    key = credentials.derive_key(secret, "credential-token")
    return CredentialService(kube, store, policy, key=key, tls=tls, endpoint=endpoint)
