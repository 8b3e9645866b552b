"""Where the credentials endpoint listens: alone, on the port asked for or on a free one.

Cases: by default it listens on a free loopback port (not a fixed one another operator on
the host could hold too); a second endpoint asking for a port the first holds refuses to
start with a message naming the address and the flag, rather than share it; the one
refused leaves nothing listening.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.runtime.config import CredentialsEndpoint
from agentjobs.services import credential_service

SETTINGS = StorageSettings(
    endpoint="http://127.0.0.1:9", bucket="agentjobs", region="us-east-1", secret_key="s"
)


def service(endpoint: CredentialsEndpoint) -> credential_service.CredentialService:
    return credential_service.build(
        None,  # type: ignore[arg-type]  # no request reaches the API here
        ObjectStore(SETTINGS),
        BucketPolicy("agentjobs"),
        endpoint,
    )


def _port(running: credential_service.CredentialService) -> int:
    port = urlsplit(running.url).port
    assert port is not None
    return port


def test_by_default_the_endpoint_listens_on_a_free_loopback_port() -> None:
    async def scenario() -> tuple[str, int, int]:
        first, second = service(CredentialsEndpoint()), service(CredentialsEndpoint())
        await first.start()
        try:
            await second.start()
            await second.stop()
        finally:
            await first.stop()
        return urlsplit(first.url).hostname or "", _port(first), _port(second)

    host, first_port, second_port = asyncio.run(scenario())
    assert CredentialsEndpoint().port == 0
    assert host == "127.0.0.1"
    assert first_port != second_port  # two operators with the defaults never share one


def test_a_second_endpoint_on_a_taken_port_refuses_to_start() -> None:
    async def scenario() -> str:
        first = service(CredentialsEndpoint())
        await first.start()
        try:
            taken = CredentialsEndpoint(port=_port(first))
            with pytest.raises(credential_service.ListenFailed) as refused:
                await service(taken).start()
        finally:
            await first.stop()
        return str(refused.value)

    message = asyncio.run(scenario())
    assert "cannot listen on 127.0.0.1:" in message
    assert "--credentials-listen" in message
