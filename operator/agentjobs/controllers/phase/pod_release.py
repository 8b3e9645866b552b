"""Letting a phase pod go once its run is recorded (the finalizer of :mod:`pod_tracking`),
and writing on it when its deletion was asked for while that can still be read.

A runner releases its own pod right after a write records its run; the
operator releases any other pod of ours that nobody needs any more: one whose
Phase is gone (an Execution deleted, so the garbage collector removes its pods),
has ended, or has moved on to a later attempt.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.contract.phase import pod_tracking
from agentjobs.contract.phase.pod_tracking import releasable
from agentjobs.kube import naming, ownership
from agentjobs.runtime import backoff
from agentjobs.runtime.errors import log_retry, transient

logger = logging.getLogger(__name__)


async def release(kube: Kube, pod: JsonObject) -> None:
    meta = pod["metadata"]
    if pod_tracking.tracked(pod):
        path = paths.pod(meta["namespace"], meta["name"])
        await kube.remove_finalizer(path, naming.POD_FINALIZER, uid=meta["uid"])


async def release_if_unneeded(kube: Kube, pod: JsonObject) -> None:
    """Release ``pod`` when its Phase no longer needs it (read afresh: the event that
    brought the pod here may predate the Phase's last status)."""
    if not pod_tracking.tracked(pod):
        return
    meta = pod["metadata"]
    phase_name = (meta.get("labels") or {}).get(naming.LABEL_PHASE)
    phase = await kube.get(paths.phase(meta["namespace"], phase_name)) if phase_name else None
    if releasable(pod, phase):
        await release(kube, pod)


async def record_deletion(kube: Kube, pod: JsonObject) -> None:
    """Write when the pod's deletion was asked for, before the kubelet's last delete hides it."""
    requested = pod_tracking.deletion_to_record(pod)
    if requested is None:
        return
    meta = pod["metadata"]
    annotations = {naming.ANNOTATION_DELETION_REQUESTED: requested}
    patch = {"metadata": {"uid": meta["uid"], "annotations": annotations}}
    await kube.merge_patch(paths.pod(meta["namespace"], meta["name"]), patch)


async def look_after(kube: Kube, pod: JsonObject, *, release_it: bool) -> None:
    """Record the pod's deletion and (``release_it``) let it go if unneeded, retrying while
    the API server fails: a kept pod whose containers have stopped may never change again,
    so no later event would bring it back. A refusal, or a pod replaced under the same name
    (409 on its UID), ends it: asking again gets the same answer."""
    delays = backoff.API.delays()
    while True:
        try:
            await record_deletion(kube, pod)
            if release_it:
                await release_if_unneeded(kube, pod)
            return
        except (ApiError, aiohttp.ClientError, TimeoutError) as error:
            if not _worth_retrying(error):
                logger.warning("pod %s: not looked after: %s", pod["metadata"]["name"], error)
                return
            delay = next(delays)
            log_retry(logger, f"pod {pod['metadata']['name']}", error, delay)
        await asyncio.sleep(delay)


def _worth_retrying(error: BaseException) -> bool:
    # A 409 here is the UID precondition: the pod of that name is another one now.
    return transient(error) and not (isinstance(error, ApiError) and error.status == 409)


async def release_pods_of(kube: Kube, namespace: str, phase: str, uid: str) -> None:
    """Let go every pod of a Phase that was just deleted, whatever state its runner was in
    (the garbage collector's delete of a pod already being deleted changes nothing, so no
    pod event may follow)."""
    delays = backoff.API.delays()
    while True:
        try:
            selector = f"{naming.LABEL_PHASE}={phase}"
            pods = await kube.list(paths.pod(namespace), label_selector=selector)
            break
        except (ApiError, aiohttp.ClientError, TimeoutError) as error:
            if not transient(error):
                logger.error("pods of phase %s/%s: not released: %s", namespace, phase, error)
                return
            delay = next(delays)
            log_retry(logger, f"pods of phase {namespace}/{phase}", error, delay)
        await asyncio.sleep(delay)
    for pod in pods:
        if ownership.owned_by(pod, uid):
            await look_after(kube, pod, release_it=True)
