"""A small typed adapter over kubernetes_asyncio: raw JSON requests and watches.

kubernetes_asyncio loads the kubeconfig (client certificate, CA, server) and
owns the aiohttp session; objects are handled as plain dicts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import aiohttp
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

Obj = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"


class ApiError(Exception):
    """An error status from the API server, or status 0 when it could not be reached."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


class KubeApi:
    """JSON requests to the API server with the node's credentials."""

    def __init__(self, api_client: Any, host: str, headers: Mapping[str, str]) -> None:
        self._api_client = api_client
        self.host = host.rstrip("/")
        self._headers = dict(headers)

    @classmethod
    async def from_kubeconfig(cls, path: str) -> KubeApi:
        configuration = k8s_client.Configuration()
        await k8s_config.load_kube_config(
            config_file=path, client_configuration=configuration, persist_config=False
        )
        headers: dict[str, str] = {}
        token = (configuration.api_key or {}).get("authorization")
        if token:
            headers["Authorization"] = str(token)
        api_client = k8s_client.ApiClient(configuration)
        return cls(api_client, str(configuration.host), headers)

    @property
    def _session(self) -> aiohttp.ClientSession:
        return cast(aiohttp.ClientSession, self._api_client.rest_client.pool_manager)

    async def close(self) -> None:
        await self._api_client.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        body: object = None,
        content_type: str = "application/json",
        timeout: float = 30.0,
    ) -> Obj:
        headers = {**self._headers, "Accept": "application/json"}
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body)
        try:
            async with self._session.request(
                method,
                self.host + path,
                params=dict(query or {}),
                data=data,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                text = await response.text()
        except aiohttp.ClientError as error:
            raise ApiError(0, f"API server unreachable: {error}") from error
        if response.status >= 400:
            raise ApiError(response.status, text)
        return cast(Obj, json.loads(text)) if text else {}

    async def get_or_none(self, path: str) -> Obj | None:
        try:
            return await self.request("GET", path)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def watch(self, path: str, query: Mapping[str, str]) -> AsyncIterator[Obj]:
        """Yield watch events until the server ends the stream."""
        params = {**query, "watch": "true", "allowWatchBookmarks": "true"}
        headers = {**self._headers, "Accept": "application/json"}
        try:
            async with self._session.get(
                self.host + path,
                params=params,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=None, sock_read=600),
            ) as response:
                if response.status >= 400:
                    raise ApiError(response.status, await response.text())
                while True:
                    line = await response.content.readline()
                    if not line:
                        return
                    if line.strip():
                        yield cast(Obj, json.loads(line))
        except aiohttp.ClientError as error:
            raise ApiError(0, f"watch interrupted: {error}") from error
