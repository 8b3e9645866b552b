"""An agent's output whose URL requests pass the credentials endpoint's body limit (issue 21).

The real endpoint (our own component, run in-process on loopback as the operator runs it,
reading the Phase from the local cluster and presigning for the local S3 store) and the
real harvester with its presigning client. Cases: a thousand files with long non-ASCII
names, whose URLs asked for in one request pass the endpoint's mebibyte (413), are all
stored by one final sync, with a final manifest listing each.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentjobs.adapters.kube import Kube
from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.adapters.presigned_store import PresignedStore
from agentjobs.contract.artifacts import credentials
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.models import presign
from agentjobs.models.storage import ArtifactManifest, ObjectLocation
from agentjobs.runtime.config import CredentialsEndpoint
from agentjobs.services import credential_service
from agentjobs.sidecars import harvester
from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX

pytestmark = pytest.mark.integration
FILES = 1000
# Three components of at most 255 bytes (NAME_MAX), about 700 bytes of UTF-8 in all.
DIRECTORY = f"d{'😀' * 60}/e{'😀' * 60}"


def phase(kubectl: Kubectl, namespace: str) -> str:
    """A Phase for the token to belong to (no operator runs it); its UID."""
    body = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "big-0-work"},
        "spec": {"executionName": "big", "index": 0, "name": "work", "image": BUSYBOX,
                 "prompt": "Write."},
    }  # fmt: skip
    kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(body))
    uid: str = kubectl.json("get", "-n", namespace, "phase", "big-0-work")["metadata"]["uid"]
    return uid


def test_a_thousand_long_non_ascii_names_are_all_stored_by_one_final_sync(
    kubectl: Kubectl, crds: None, namespace: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    output = tmp_path / "output"
    (output / DIRECTORY).mkdir(parents=True)
    paths = [f"{DIRECTORY}/{index:04}{'😀' * 55}" for index in range(FILES)]
    for path in paths:
        (output / path).write_text(path[-8:])
    settings = StorageSettings.from_environment(s3_env)
    store = ObjectStore(settings)
    store.ensure_bucket(settings.bucket)
    root = f"namespaces/{namespace}/executions/big/0-work/attempt-1"
    wanted = [ObjectLocation(settings.bucket, f"{root}/output/{path}") for path in paths]
    assert len(presign.body([presign.encoded_item("PUT", w) for w in wanted])) > (
        presign.MAX_BODY_BYTES
    )  # asked for at once, the endpoint refuses them (413)
    claims = credentials.Claims(
        namespace=namespace,
        phase="big-0-work",
        phase_uid=phase(kubectl, namespace),
        attempt=1,
        writable=credentials.Root(settings.bucket, root),
        readable=(),
        expires=int(time.time()) + 3600,
    )

    async def scenario() -> None:
        kube = await Kube.connect(s3_env["KUBECONFIG"])
        service = credential_service.build(
            kube, store, BucketPolicy(settings.bucket), CredentialsEndpoint()
        )
        await service.start()
        presigned = PresignedStore(service.url, service.issue(claims), service.ca_pem)
        try:
            worker = harvester.Harvester(
                presigned, directory=output, bucket=settings.bucket, attempt_root=root
            )
            await asyncio.to_thread(worker.sync, final=True)
        finally:
            presigned.close()
            await service.stop()
            await kube.close()

    try:
        asyncio.run(scenario())
        data = store.get_bytes(ObjectLocation(settings.bucket, f"{root}/manifest.json"))
        assert data is not None
        manifest = ArtifactManifest.model_validate_json(data)
        assert manifest.final and manifest.failure is None
        assert sorted(e.path for e in manifest.entries if e.uploaded) == sorted(paths)
        assert store.get_bytes(wanted[-1]) == paths[-1][-8:].encode()
    finally:
        store.remove_prefix(settings.bucket, root)
