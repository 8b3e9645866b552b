"""The credentials endpoint's HTTPS layer and the sidecars' client, on a real local server.

No cluster: these are the answers given before the endpoint reads the token's Phase, and
the URLs it computes (presigning needs no request when the region is known). The Phase
check and real uploads are proven in tests/integration/test_tenant.py. Cases: the derived
certificate is the same on every derivation, verifies with its CA and not with another's;
a missing, malformed, re-signed or expired token is 401; a malformed or oversized batch is
400; a key outside the token's grants, or a bucket off the allow-list, is 403 naming the
object; the client turns 401/403 into CredentialRefused and an unreachable or untrusted
endpoint into a retryable StorageError; the flags of `agentjobs run` reach the config. A
body over the shared limit (models/presign.py) is 413 and a body at it is read; the client
takes a 413, or any 4xx but 408 and 429, as a refusal for good (CredentialRefused), never
as an outage, and 408, 429 and 5xx as a StorageError, retried.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import ssl
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import urllib3
from aiohttp import web

from agentjobs.adapters import tls_identity
from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.adapters.presigned_store import CredentialRefused, PresignedStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.cli import run
from agentjobs.contract.artifacts import credentials
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.models import presign
from agentjobs.models.storage import ObjectLocation
from agentjobs.runtime.config import CredentialsEndpoint
from agentjobs.services import credential_service

ROOT = "team-a/review/0-plan/attempt-1"
SETTINGS = StorageSettings(
    endpoint="http://127.0.0.1:9", bucket="agentjobs", region="us-east-1", secret_key="s"
)


def claims(*, expires: int = 4_000_000_000) -> credentials.Claims:
    return credentials.Claims(
        namespace="team-a",
        phase="review-0-plan",
        phase_uid="uid",
        attempt=1,
        writable=credentials.Root("agentjobs", ROOT),
        readable=(),
        expires=expires,
    )


@dataclass
class Running:
    service: credential_service.CredentialService
    stores: list[PresignedStore] = field(default_factory=list)

    def store(self, token: str, ca: str | None = None) -> PresignedStore:
        store = PresignedStore(self.service.url, token, ca or self.service.ca_pem)
        self.stores.append(store)
        return store

    def post(self, body: bytes, token: str | None) -> tuple[int, dict[str, str]]:
        context = ssl.create_default_context(cadata=self.service.ca_pem)
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        with urllib3.PoolManager(ssl_context=context) as http:
            response = http.request(
                "POST", self.service.url + "/v1/presign", body=body, headers=headers
            )
        try:
            answer: dict[str, str] = json.loads(response.data)
        except ValueError:  # aiohttp's own 413 is text
            answer = {}
        return response.status, answer


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Running]:
    service = credential_service.build(
        None,  # type: ignore[arg-type]  # never reached: every case is refused before
        ObjectStore(SETTINGS),
        BucketPolicy("agentjobs"),
        CredentialsEndpoint(port=0),
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(service.start(), loop).result(10)
    running = Running(service)
    yield running
    for store in running.stores:
        store.close()
    # A client socket whose TLS handshake failed lives on in the exception pytest kept;
    # collect it so that it closes, and let the server see every connection close before
    # its loop goes (an open transport left in a closed loop warns in a later test).
    gc.collect()
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.5), loop).result(10)
    asyncio.run_coroutine_threadsafe(service.stop(), loop).result(10)
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.2), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def test_the_derived_certificate_is_the_same_each_time_and_only_its_ca_verifies_it() -> None:
    first = tls_identity.derived(b"seed", ["agentjobs.ops.svc"])
    again = tls_identity.derived(b"seed", ["agentjobs.ops.svc"])
    assert first.ca_pem == again.ca_pem
    assert first.cert_pem == again.cert_pem and first.key_pem == again.key_pem
    assert tls_identity.derived(b"other", ["agentjobs.ops.svc"]).ca_pem != first.ca_pem


def test_the_servers_key_leaves_nothing_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where it would be left
    identity = tls_identity.derived(b"seed", ["agentjobs.ops.svc"])
    context = identity.server_context()
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    assert list(tmp_path.iterdir()) == []


def _message(refused: pytest.ExceptionInfo[BaseException]) -> str:
    return str(refused.value)


def test_a_bad_token_is_refused_and_never_repeated(endpoint: Running) -> None:
    key = credentials.derive_key(b":s", "credential-token")
    expired = credentials.sign(claims(expires=1), key)
    forged = credentials.sign(claims(), b"not the operator's key")
    for token in (expired, forged, "v1.e30.AAAA", "garbage"):
        with pytest.raises(CredentialRefused) as refused:
            endpoint.store(token).get_bytes(ObjectLocation("agentjobs", f"{ROOT}/manifest.json"))
        assert token not in _message(refused)
    assert endpoint.post(b"{}", None)[0] == 401


def test_objects_outside_the_grant_or_the_allow_list_are_refused(endpoint: Running) -> None:
    token = endpoint.service.issue(
        credentials.Claims(
            namespace="team-a",
            phase="review-0-plan",
            phase_uid="uid",
            attempt=1,
            writable=credentials.Root("elsewhere", ROOT),
            readable=(),
            expires=4_000_000_000,
        )
    )
    store = endpoint.store(token)
    with pytest.raises(CredentialRefused, match="not allowed by this operator"):
        store.put_bytes(ObjectLocation("elsewhere", f"{ROOT}/x"), b"x", media_type="text/plain")
    own = endpoint.store(endpoint.service.issue(claims()))
    for key in ("team-b/review/0-plan/attempt-1/x", f"{ROOT}/../../x", f"{ROOT}/output/../../y"):
        with pytest.raises(CredentialRefused, match=r"may not write|not a clean object key"):
            own.put_bytes(ObjectLocation("agentjobs", key), b"x", media_type="text/plain")


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"objects": []}',
        b'{"objects": [{"method": "DELETE", "bucket": "agentjobs", "key": "k"}]}',
        b'{"objects": [{"method": "PUT", "bucket": 1, "key": "k"}]}',
        json.dumps(
            {"objects": [{"method": "PUT", "bucket": "agentjobs", "key": f"{ROOT}/x"}] * 1001}
        ).encode(),
    ],
)
def test_a_malformed_or_oversized_batch_is_a_bad_request(endpoint: Running, body: bytes) -> None:
    status, answer = endpoint.post(body, endpoint.service.issue(claims()))
    assert status == 400, answer


def test_an_untrusted_or_unreachable_endpoint_is_a_retryable_storage_error(
    endpoint: Running,
) -> None:
    other_ca = tls_identity.derived(b"another operator", ["127.0.0.1"]).ca_pem
    location = ObjectLocation("agentjobs", f"{ROOT}/manifest.json")
    with pytest.raises(StorageError, match="SSLError"):
        endpoint.store("t", other_ca).get_bytes(location)
    unreachable = PresignedStore("https://127.0.0.1:9", "t", endpoint.service.ca_pem)
    endpoint.stores.append(unreachable)
    with pytest.raises(StorageError):
        unreachable.get_bytes(location)


def test_the_store_needs_all_three_settings() -> None:
    with pytest.raises(StorageError, match="AGENTJOBS_CREDENTIALS_TOKEN"):
        PresignedStore.from_environment(
            {"AGENTJOBS_CREDENTIALS_URL": "https://x", "AGENTJOBS_CREDENTIALS_CA": "pem"}
        )


def test_the_flags_reach_the_config(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    args = parser.parse_args(
        [
            "--allowed-bucket=team-*",
            "--allowed-bucket=shared",
            "--credentials-listen=0.0.0.0:8443",
            "--credentials-url=https://agentjobs.ops.svc:8443",
        ]
    )
    assert args.allowed_bucket == ["team-*", "shared"]
    assert run.credentials_endpoint(args) == CredentialsEndpoint(
        host="0.0.0.0", port=8443, url="https://agentjobs.ops.svc:8443"
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["--credentials-listen=8443"])
    half = parser.parse_args([f"--credentials-tls-cert={tmp_path / 'c'}"])
    with pytest.raises(SystemExit):
        run.credentials_endpoint(half)


def test_a_body_over_the_shared_limit_is_413_and_one_at_it_is_read(endpoint: Running) -> None:
    token = endpoint.service.issue(claims())
    over = b" " * (presign.MAX_BODY_BYTES + 1)
    assert endpoint.post(over, token)[0] == 413
    at = b'{"objects": []}'.ljust(presign.MAX_BODY_BYTES)
    assert endpoint.post(at, token)[0] == 400  # read, and found to ask for nothing


def test_a_413_is_a_refusal_for_good_not_an_outage(endpoint: Running) -> None:
    store = endpoint.store(endpoint.service.issue(claims()))
    huge = ObjectLocation("agentjobs", f"{ROOT}/" + "\u00e9" * presign.MAX_BODY_BYTES)
    with pytest.raises(CredentialRefused, match="HTTP 413"):
        store.prepare("PUT", [huge])


@pytest.mark.parametrize(
    ("status", "refused"),
    [(400, True), (404, True), (413, True), (408, False), (429, False), (500, False), (503, False)],
)
def test_only_a_4xx_but_408_and_429_is_a_refusal_for_good(status: int, refused: bool) -> None:
    identity = tls_identity.derived(b"answers", ["127.0.0.1"])

    async def answer(request: web.Request) -> web.Response:
        # No keep-alive: nothing is left open when the loop goes.
        return web.json_response(
            {"error": "scripted"}, status=status, headers={"Connection": "close"}
        )

    async def scenario() -> BaseException:
        app = web.Application()
        app.router.add_post(presign.PRESIGN_PATH, answer)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=identity.server_context())
        await site.start()
        store = PresignedStore(f"https://127.0.0.1:{runner.addresses[0][1]}", "t", identity.ca_pem)
        try:
            await asyncio.to_thread(store.prepare, "GET", [ObjectLocation("b", "k")])
        except (StorageError, CredentialRefused) as error:
            return error
        finally:
            store.close()
            await asyncio.sleep(0.1)  # the server sees the connection close
            await runner.cleanup()
        raise AssertionError("no error")

    error = asyncio.run(scenario())
    assert isinstance(error, CredentialRefused) is refused
    assert isinstance(error, StorageError) is not refused
    assert f"HTTP {status}: scripted" in str(error)
