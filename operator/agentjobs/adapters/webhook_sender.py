"""R51: one attempt to deliver a signed webhook, over HTTP(S) with aiohttp.

The caller has already checked the URL against the allow-list; this sends
the bytes exactly as checked (no re-encoding), never follows a redirect,
never takes a proxy from the environment, and checks every address a name
resolves to with ``forbidden`` (a link-local or metadata address is not
connected to even when DNS points the allowed name there). The connection is
made to the addresses the resolver returned after that check, so a name that
answers differently a moment later changes nothing. The answer's body is
never read: only its status reaches the status (R59), as receivers may echo
anything there. Every outcome is
a value (``HttpAnswer``, ``NoAnswer``, ``NotSent``), never an exception.
Logs and errors name the host only: a webhook URL's path and query often
carry its token, and the signing key is never seen here, only its headers.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from agentjobs.models.notifications import Answer, HttpAnswer, NoAnswer, NotSent

log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 5.0
USER_AGENT = "agentjobs-webhooks"

# Why a host or address is never called (None: it may be); the rule is the contract's
# (notifications.addresses).
Forbidden = Callable[[str], str | None]


class _ForbiddenAddress(OSError):
    pass


class _GuardedResolver(AbstractResolver):
    """Resolves as usual, then drops the addresses no webhook may reach."""

    def __init__(self, forbidden: Forbidden) -> None:
        self._inner = aiohttp.ThreadedResolver()
        self._forbidden = forbidden

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._inner.resolve(host, port, family)
        usable = [result for result in results if self._forbidden(result["host"]) is None]
        if not usable:
            raise _ForbiddenAddress(f"{host} resolves only to addresses the operator never calls")
        return usable

    async def close(self) -> None:
        await self._inner.close()


def _no_answer(error: BaseException, authority: str, timeout: float) -> Answer:
    if isinstance(error, TimeoutError):
        return NoAnswer(f"no answer from {authority} within {timeout:g} s")
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        if isinstance(error.os_error, _ForbiddenAddress):
            return NotSent(str(error.os_error), retry=False)
        return NoAnswer(f"the name of {authority} could not be resolved")
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        return NoAnswer(f"the TLS certificate of {authority} was not trusted")
    if isinstance(error, aiohttp.ClientSSLError):
        return NoAnswer(f"the TLS handshake with {authority} failed")
    if isinstance(error, aiohttp.ClientConnectorError):
        reason = error.os_error.strerror or type(error.os_error).__name__
        return NoAnswer(f"could not connect to {authority}: {reason}")
    # Other client errors: their text may quote the URL, so only their kind is told.
    return NoAnswer(f"the request to {authority} failed: {type(error).__name__}")


async def send(
    *,
    url: str,
    authority: str,
    content_type: str,
    body: bytes,
    headers: Mapping[str, str],
    forbidden: Forbidden,
    timeout: float = TIMEOUT_SECONDS,
) -> Answer:
    """POST ``body`` with the signature ``headers`` to ``url``; the answer as a value.

    ``authority`` is what logs and errors may say of the target (host[:port]).
    """
    target = URL(url, encoded=True)
    reason = forbidden(target.host or "")
    if reason is not None:
        return NotSent(f"{authority} is {reason}", retry=False)
    client_timeout = aiohttp.ClientTimeout(
        total=timeout, connect=min(CONNECT_TIMEOUT_SECONDS, timeout)
    )
    connector = aiohttp.TCPConnector(resolver=_GuardedResolver(forbidden), force_close=True)
    request_headers = {
        **headers,
        "content-type": content_type,
        "user-agent": USER_AGENT,
    }
    try:
        async with (
            aiohttp.ClientSession(
                connector=connector, timeout=client_timeout, trust_env=False
            ) as session,
            session.post(
                target, data=body, headers=request_headers, allow_redirects=False
            ) as response,
        ):
            answer: Answer = HttpAnswer(
                status=response.status, retry_after=response.headers.get("retry-after")
            )
    except (TimeoutError, aiohttp.ClientError, OSError) as error:
        answer = _no_answer(error, authority, timeout)
    message_id = headers.get("webhook-id", "")
    if isinstance(answer, HttpAnswer):
        log.info("webhook %s to %s: HTTP %d", message_id, authority, answer.status)
    else:
        log.warning("webhook %s to %s: %s", message_id, authority, answer.error)
    return answer
