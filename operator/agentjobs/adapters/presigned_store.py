"""The sidecars' store: objects moved through presigned URLs, with no storage credential.

The sidecars hold one attempt's token. They trade it at the operator's
credentials endpoint (HTTPS, verified with the CA from the phase's Secret)
for presigned URLs, in batches within the endpoint's limits on objects and
bytes (:mod:`agentjobs.models.presign`), and keep each URL until shortly
before it expires; the bytes then go straight between the pod and the store.
An endpoint that cannot answer now (unreachable, 408, 429, 5xx) is a
:class:`StorageError`, retried; one that refuses the request for good (any
other 4xx: the token, an object, the request itself) is
:class:`CredentialRefused`, which asking again cannot change. The methods are
those of :class:`ObjectStore` that the sidecars call. Tokens and URLs never
appear in an error message (a URL carries its signature).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import urllib3

from agentjobs.adapters.checked_file import write_checked
from agentjobs.adapters.store_common import StorageError, content_type
from agentjobs.models import presign
from agentjobs.models.storage import ObjectLocation

ENV_URL = "AGENTJOBS_CREDENTIALS_URL"
ENV_TOKEN = "AGENTJOBS_CREDENTIALS_TOKEN"
ENV_CA = "AGENTJOBS_CREDENTIALS_CA"
# A URL is used only while it has at least this long to live (a large upload takes time).
RENEW_BEFORE_SECONDS = 120.0
READ_CHUNK = 1024 * 1024
TIMEOUT = urllib3.Timeout(connect=10.0, read=120.0)
# A batch of URLs is computed in well under a second; a replica that takes longer is stuck.
ENDPOINT_TIMEOUT = urllib3.Timeout(connect=5.0, read=15.0)


class CredentialRefused(PermissionError):
    """The endpoint refused the request for good: this attempt's token, an object asked for,
    or the request itself (do not retry)."""


# Answers that say "not now" rather than "no": the request may succeed when asked again.
_RETRYABLE = frozenset({408, 429})


@dataclass(frozen=True)
class _Url:
    url: str
    usable_until: float


class _LimitedReader(io.RawIOBase):
    """At most ``size`` bytes of ``source``, hashed as they are handed to the uploader."""

    def __init__(self, source: IO[bytes], size: int) -> None:
        self._source = source
        self._left = size
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        wanted = self._left if size < 0 else min(size, self._left)
        data = self._source.read(wanted) if wanted else b""
        self._left -= len(data)
        self.digest.update(data)
        return data


class PresignedStore:
    """Blocking object operations through URLs the credentials endpoint presigns."""

    def __init__(self, endpoint: str, token: str, ca_pem: str) -> None:
        self._endpoint = endpoint.rstrip("/") + presign.PRESIGN_PATH
        self._token = token
        context = ssl.create_default_context(cadata=ca_pem)
        self._endpoint_http = urllib3.PoolManager(ssl_context=context, timeout=ENDPOINT_TIMEOUT)
        self._store_http = urllib3.PoolManager(maxsize=16, timeout=TIMEOUT)
        self._urls: dict[tuple[str, ObjectLocation], _Url] = {}

    def close(self) -> None:
        """Close every pooled connection."""
        self._endpoint_http.clear()
        self._store_http.clear()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> PresignedStore:
        missing = [name for name in (ENV_URL, ENV_TOKEN, ENV_CA) if not environ.get(name)]
        if missing:
            raise StorageError(f"not set: {', '.join(missing)}")
        return cls(environ[ENV_URL], environ[ENV_TOKEN], environ[ENV_CA])

    def prepare(self, method: str, locations: Iterable[ObjectLocation]) -> None:
        """Obtain URLs for many objects at once (a request per thousand, or per mebibyte)."""
        now = time.monotonic()
        wanted = [
            location
            for location in dict.fromkeys(locations)
            if (known := self._urls.get((method, location))) is None or known.usable_until <= now
        ]
        for batch in presign.batches(method, wanted):
            self._presign(method, batch)

    def _presign(self, method: str, locations: list[ObjectLocation]) -> None:
        body = presign.body([presign.encoded_item(method, item) for item in locations])
        asked = time.monotonic()
        try:
            response = self._endpoint_http.request(
                "POST",
                self._endpoint,
                body=body,
                headers={
                    "Authorization": f"Bearer {self._token}",
                    "Content-Type": "application/json",
                },
                retries=False,
            )
        except urllib3.exceptions.HTTPError as error:
            self._endpoint_http.clear()  # the next try connects afresh, maybe to another replica
            raise StorageError(f"credentials endpoint: {type(error).__name__}") from None
        try:
            answer = json.loads(response.data)
        except ValueError:
            answer = {}
        if response.status == 200:
            self._keep(method, locations, answer, asked)
            return
        reason = answer.get("error") if isinstance(answer, dict) else None
        shown = f"HTTP {response.status}" + (f": {reason}" if isinstance(reason, str) else "")
        if 400 <= response.status < 500 and response.status not in _RETRYABLE:
            raise CredentialRefused(f"credentials endpoint refused the request: {shown}")
        self._endpoint_http.clear()
        raise StorageError(f"credentials endpoint: {shown}")

    def _keep(
        self, method: str, locations: list[ObjectLocation], answer: dict[str, Any], asked: float
    ) -> None:
        urls, lifetime = answer["urls"], float(answer["expiresInSeconds"])
        usable_until = asked + max(lifetime - RENEW_BEFORE_SECONDS, 1.0)
        for location, url in zip(locations, urls, strict=True):
            self._urls[method, location] = _Url(url, usable_until)

    def _url(self, method: str, location: ObjectLocation) -> str:
        self.prepare(method, [location])
        return self._urls[method, location].url

    def _send(
        self,
        method: str,
        location: ObjectLocation,
        *,
        body: IO[bytes] | None = None,
        headers: dict[str, str] | None = None,
    ) -> urllib3.BaseHTTPResponse:
        try:
            return self._store_http.request(
                method,
                self._url(method, location),
                body=body,
                headers=headers,
                preload_content=False,
                retries=False,
            )
        except urllib3.exceptions.HTTPError as error:
            raise StorageError(f"{method} {location.url}: {type(error).__name__}") from None

    def _failed(self, method: str, location: ObjectLocation, status: int) -> StorageError:
        self._urls.pop((method, location), None)  # a refused URL may have expired: ask anew
        return StorageError(f"{method} {location.url}: HTTP {status} from the store")

    def put_stream(
        self, location: ObjectLocation, stream: IO[bytes], *, size: int, media_type: str
    ) -> str:
        """Upload ``size`` bytes read from ``stream``; their SHA-256."""
        reader = _LimitedReader(stream, size)
        headers = {"Content-Length": str(size), "Content-Type": media_type}
        response = self._send("PUT", location, body=reader, headers=headers)  # type: ignore[arg-type]
        response.drain_conn()
        response.release_conn()
        if response.status != 200:
            raise self._failed("PUT", location, response.status)
        return reader.digest.hexdigest()

    def put_bytes(self, location: ObjectLocation, data: bytes, *, media_type: str) -> None:
        self.put_stream(location, io.BytesIO(data), size=len(data), media_type=media_type)

    def put_file(self, location: ObjectLocation, path: Path, *, size: int) -> str:
        """Upload ``size`` bytes of a file (never through a final symlink); their SHA-256."""
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(descriptor, "rb") as source:
            return self.put_stream(
                location, source, size=size, media_type=content_type(location.key)
            )

    def get_bytes(self, location: ObjectLocation) -> bytes | None:
        """The object's bytes, or None when there is no such object."""
        response = self._send("GET", location)
        try:
            if response.status == 404:
                return None
            if response.status != 200:
                raise self._failed("GET", location, response.status)
            return response.read()
        finally:
            response.release_conn()

    def download(self, location: ObjectLocation, destination: Path, *, sha256: str) -> None:
        """Write the object to ``destination``, refusing it unless it hashes to ``sha256``."""
        response = self._send("GET", location)
        try:
            if response.status != 200:
                raise self._failed("GET", location, response.status)
            chunks = response.stream(READ_CHUNK)
            write_checked(chunks, destination, sha256=sha256, url=location.url)
        except urllib3.exceptions.HTTPError as error:
            raise StorageError(f"GET {location.url}: {type(error).__name__}") from None
        finally:
            response.release_conn()
