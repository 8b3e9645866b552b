"""``artifactRetention: Delete``: a finalizer on the Execution that removes its stored
objects when it is deleted, added and taken off as the spec and the storage say."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agentjobs.adapters import paths
from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.models.resources import GROUP, ArtifactStorage, ExecutionSpec
from agentjobs.services.phase_storage import PhaseStorage

logger = logging.getLogger(__name__)
ARTIFACTS_FINALIZER = f"{GROUP}/artifacts"


@dataclass(frozen=True)
class Retention:
    being_deleted: bool  # nothing else is to be done for the Execution
    written: JsonObject | None = None  # the Execution as a finalizer change returned it


async def apply(
    kube: Kube, storage: PhaseStorage | None, body: JsonObject, spec: ExecutionSpec
) -> Retention:
    """Hold the finalizer while it is wanted; once the Execution is being deleted, remove
    its objects and let it go."""
    meta = body["metadata"]
    finalizers: list[str] = meta.get("finalizers") or []
    held = ARTIFACTS_FINALIZER in finalizers
    others = [f for f in finalizers if f != ARTIFACTS_FINALIZER]
    if meta.get("deletionTimestamp"):
        if held and storage is not None:
            stored = spec.artifacts or ArtifactStorage()
            removed = await storage.remove_execution(
                stored.bucket or storage.store.settings.bucket,
                stored.prefix,
                meta["namespace"],
                meta["name"],
            )
            logger.info(
                "removed %d artifact objects of %s/%s", removed, meta["namespace"], meta["name"]
            )
        written = await _set_finalizers(kube, body, others) if held else None
        return Retention(being_deleted=True, written=written)
    wanted = spec.artifact_retention == "Delete" and storage is not None
    if wanted and not held:
        return Retention(
            False, await _set_finalizers(kube, body, [*finalizers, ARTIFACTS_FINALIZER])
        )
    if held and not wanted:
        return Retention(False, await _set_finalizers(kube, body, others))
    return Retention(False)


async def _set_finalizers(kube: Kube, body: JsonObject, finalizers: list[str]) -> JsonObject | None:
    meta = body["metadata"]
    # The resourceVersion makes this a compare-and-swap: another writer's change wins.
    return await kube.merge_patch(
        paths.execution(meta["namespace"], meta["name"]),
        {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}},
    )
