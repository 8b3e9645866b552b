"""The operator's side of artifacts: reading the harvester's manifest, storing the
transcript and the recovered artifacts it writes itself (R28-R34).

Blocking S3 calls run in threads; a storage outage is retried with backoff,
each failure reported through ``on_error`` so it shows in the Phase's status.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar

from pydantic import ValidationError

from agentjobs.adapters import metrics
from agentjobs.adapters.object_store import ObjectStore
from agentjobs.adapters.store_common import StorageError
from agentjobs.contract.artifacts import harvest, object_layout, unpushed_work
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.models.contract import Artifact
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import (
    ArtifactManifest,
    HandoffManifest,
    HandoffRef,
    ObjectLocation,
    RepositoryRecord,
)
from agentjobs.runtime import backoff
from agentjobs.services.credential_service import CredentialService

logger = logging.getLogger(__name__)
T = TypeVar("T")
ErrorReport = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class StoredObject:
    url: str
    sha256: str


class PhaseStorage:
    """Artifacts of phases in one S3-compatible store."""

    def __init__(
        self, store: ObjectStore, policy: BucketPolicy, credentials: CredentialService
    ) -> None:
        self.store = store
        self.policy = policy
        self.credentials = credentials

    def bucket(self, spec: PhaseSpec) -> str:
        return (spec.artifacts.bucket if spec.artifacts else None) or self.store.settings.bucket

    def execution_root(self, spec: PhaseSpec, *, namespace: str) -> str:
        return object_layout.execution_root(
            prefix=spec.artifacts.prefix if spec.artifacts else None,
            namespace=namespace,
            execution=spec.execution_name,
        )

    def attempt_root(self, spec: PhaseSpec, *, namespace: str, attempt: int) -> str:
        return object_layout.attempt_root(
            execution_root=self.execution_root(spec, namespace=namespace),
            index=spec.index,
            phase=spec.name,
            attempt=attempt,
        )

    def grader_root(self, spec: PhaseSpec, *, namespace: str, attempt: int) -> str:
        """Where the grader of agent attempt ``attempt`` stores its output (R38)."""
        return object_layout.grader_root(
            execution_root=self.execution_root(spec, namespace=namespace),
            index=spec.index,
            phase=spec.name,
            attempt=attempt,
        )

    async def _retrying(self, operation: Callable[[], T], on_error: ErrorReport) -> T:
        delays = backoff.STORAGE.delays()
        while True:
            try:
                return await asyncio.to_thread(operation)
            except StorageError as error:
                metrics.storage_errors.inc()
                delay = next(delays)
                logger.warning("storage: %s; retrying in %.1f s", error, delay)
                await on_error(f"storage unavailable: {error}")
            await asyncio.sleep(delay)

    async def bucket_ready(self, bucket: str, on_error: ErrorReport) -> bool:
        """Whether ``bucket`` is there to store into: the operator's own is created when
        missing, any other allowed one must exist (R60)."""
        if self.policy.creates(bucket):
            await self._retrying(lambda: self.store.ensure_bucket(bucket), on_error)
            return True
        return await self._retrying(lambda: self.store.bucket_exists(bucket), on_error)

    async def manifest(
        self, bucket: str, root: str, on_error: ErrorReport
    ) -> ArtifactManifest | None:
        location = ObjectLocation(bucket, object_layout.manifest_key(root))
        data = await self._retrying(lambda: self.store.get_bytes(location), on_error)
        if data is None:
            return None
        try:
            return ArtifactManifest.model_validate_json(data)
        except ValidationError as error:
            # Written inside the agent's pod: one that does not parse is no complete harvest.
            logger.warning("unreadable manifest %s: %s", location.url, error)
            return None

    async def store_transcript(
        self, bucket: str, root: str, transcript: IO[bytes], size: int, on_error: ErrorReport
    ) -> None:
        location = ObjectLocation(bucket, object_layout.transcript_key(root))

        def upload() -> None:
            transcript.seek(0)
            self.store.put_stream(location, transcript, size=size, media_type="text/plain")

        await self._retrying(upload, on_error)

    async def store_recovered(
        self, bucket: str, root: str, artifacts: Sequence[Artifact], on_error: ErrorReport
    ) -> dict[str, StoredObject]:
        """Write the artifacts the operator made itself (R29-R31)."""
        stored = {}
        for artifact in artifacts:
            if artifact.content is None:
                continue
            data = artifact.content.encode("utf-8")
            location = ObjectLocation(bucket, object_layout.output_key(root, artifact.path))
            upload = functools.partial(
                self.store.put_bytes, location, data, media_type="text/markdown"
            )
            await self._retrying(upload, on_error)
            stored[artifact.path] = StoredObject(location.url, hashlib.sha256(data).hexdigest())
        return stored

    async def store_handoff(
        self, bucket: str, root: str, manifest: HandoffManifest, on_error: ErrorReport
    ) -> HandoffRef:
        """R35: write ``artifacts.json``, the list the next phase fetches, and name it."""
        data = manifest.model_dump_json(by_alias=True).encode()
        location = ObjectLocation(bucket, object_layout.handoff_key(root))
        upload = functools.partial(
            self.store.put_bytes, location, data, media_type="application/json"
        )
        await self._retrying(upload, on_error)
        return HandoffRef(
            manifest=location.url,
            sha256=hashlib.sha256(data).hexdigest(),
            count=len(manifest.artifacts),
        )

    async def remove_execution(
        self, bucket: str, prefix: str | None, namespace: str, execution: str
    ) -> int:
        if not self.policy.allows(bucket):
            # Nothing was stored there: the phase was blocked before its pod was made.
            logger.warning(
                "not removing %s/%s: %s", namespace, execution, self.policy.refusal(bucket)
            )
            return 0
        root = object_layout.execution_root(prefix=prefix, namespace=namespace, execution=execution)
        try:
            return await asyncio.to_thread(self.store.remove_prefix, bucket, root)
        except StorageError:
            metrics.storage_errors.inc()
            raise


def stored_files(bucket: str, root: str, manifest: ArtifactManifest) -> dict[str, StoredObject]:
    """Where the harvester stored each uploaded file, by path."""
    return {
        entry.path: StoredObject(
            ObjectLocation(bucket, object_layout.output_key(root, entry.path)).url, entry.sha256
        )
        for entry in manifest.entries
        if entry.uploaded and entry.sha256 and harvest.safe_path(entry.path)
    }


def stored_work(
    bucket: str | None, root: str | None, work: Sequence[RepositoryRecord]
) -> dict[str, StoredObject]:
    """Where the harvester stored each patch of unpushed work (R52), by artifact path."""
    if not bucket or not root:
        return {}
    return {
        path: StoredObject(
            ObjectLocation(bucket, object_layout.work_key(root, path)).url, patch.sha256
        )
        for path, patch in unpushed_work.stored_patches(work)
    }


def bundle_url(bucket: str | None, root: str | None, repository: str) -> str:
    """Where the harvester stores a checked-out repository's bundle of work (R63)."""
    path = unpushed_work.patch_path(repository, unpushed_work.WORK_BUNDLE)
    return ObjectLocation(bucket or "", object_layout.work_key(root or "", path)).url
