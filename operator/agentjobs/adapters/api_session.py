"""Requests to the API server: one aiohttp connection pool, authenticated as
kubernetes_asyncio's configuration says (the in-cluster service account, or a kubeconfig).

The requests are sent here rather than through the generated client: its session
trusts the environment, which sends every request through two thread-pool hand-offs
(to read ``~/.netrc`` and the proxy variables), and its serializer walks every body
again. At a thousand phases those were a fifth of the operator's CPU. Every connection
probes its peer when idle (:mod:`tcp_keepalive`).
"""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import Any

import aiohttp
import yarl
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

from agentjobs.adapters import tcp_keepalive


class ApiSession:
    """One connection pool to the API server, authenticated as ``configuration`` says
    (``limit`` 0: no cap on connections)."""

    def __init__(self, configuration: Any, *, limit: int) -> None:
        self._configuration = configuration
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
        if not configuration.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        connector = aiohttp.TCPConnector(
            limit=limit, ssl=context, socket_factory=tcp_keepalive.keepalive_socket
        )
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
        self._options: dict[str, Any] = {}
        if configuration.proxy:
            self._options["proxy"] = configuration.proxy
        if configuration.tls_server_name:
            self._options["server_hostname"] = configuration.tls_server_name

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str],
        body: Any,
        content_type: str,
        timeout: aiohttp.ClientTimeout,
        bearer: str | None = None,
    ) -> aiohttp.ClientResponse:
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        # Asked each time: the configuration refreshes a token that expires (an exec plugin,
        # a projected service-account token).
        for setting in (await self._configuration.auth_settings()).values():
            headers[setting["key"]] = setting["value"]
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        # Sent as built: paths.py quoted every segment, and a URL normalised again here would
        # resolve a ``..`` against the segments before it.
        return await self._session.request(
            method,
            yarl.URL(self._configuration.host + path, encoded=True),
            params=query,
            # Compact, as status_budget measures it; json, not orjson: a lone surrogate an
            # agent's text kept is sent escaped, where orjson refuses it.
            data=None if body is None else json.dumps(body, separators=(",", ":")),
            headers=headers,
            timeout=timeout,
            **self._options,
        )

    async def close(self) -> None:
        await self._session.close()


async def configuration(kubeconfig: str | None = None) -> Any:
    """The in-cluster service account when there is one (and no ``kubeconfig`` is named),
    else the kubeconfig."""
    result = k8s_client.Configuration()
    if kubeconfig is None:
        try:
            k8s_config.load_incluster_config(client_configuration=result)  # type: ignore[no-untyped-call]
            return result
        except k8s_config.ConfigException:
            pass
    await k8s_config.load_kube_config(config_file=kubeconfig, client_configuration=result)
    return result


@contextlib.asynccontextmanager
async def streamed(response: aiohttp.ClientResponse) -> AsyncIterator[None]:
    """``response`` read to its end, or dropped at once when its reader leaves it before.

    Closing a stream cut short would start TLS's goodbye, which keeps the socket open
    until the API server answers it: a program that ends its event loop first (a test, a
    command) leaves the socket unclosed. A stream given up needs no goodbye."""
    async with response:
        try:
            yield
        except BaseException:
            if response.connection is not None and response.connection.protocol is not None:
                response.connection.protocol.abort()
            raise
