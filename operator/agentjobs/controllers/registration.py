"""The kopf handlers: thin, they only hand events to the :class:`Operator`.

Only event-watching handlers are used, so kopf writes no annotation and no
finalizer on anybody's objects: deleting an Execution never waits for the
operator. kopf runs standalone; replicas elect their leader by a Lease
(:mod:`leadership`), and the :class:`Operator` ignores events while it does not lead.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import kopf

from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.adapters.object_store import ObjectStore, StorageNotConfigured, StorageSettings
from agentjobs.contract.artifacts.bucket_policy import BucketPolicy
from agentjobs.controllers.operator import Operator
from agentjobs.kube import naming
from agentjobs.models.resources import GROUP, VERSION
from agentjobs.runtime import observed
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.leadership import Leadership
from agentjobs.services import credential_service
from agentjobs.services.phase_storage import PhaseStorage


class NoDiffBase(kopf.DiffBaseStorage):
    """No diff base: only event and index handlers are registered, and they need no diff.

    kopf's default deep-copies every event's body (managed fields and status included) to
    diff it against an annotation that is never written; at a thousand phases that copying
    was a tenth of the operator's CPU.
    """

    def build(
        self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None
    ) -> kopf.BodyEssence:
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        return None


def configure(settings: kopf.OperatorSettings) -> None:
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.scanning.disabled = True  # the resources are known: no need to watch CRDs
    settings.posting.level = logging.WARNING  # events come from conditions, not from logs
    settings.watching.server_timeout = 300
    # The API server sends only phase pods; a handler's ``labels=`` alone would filter them
    # here, after every pod of the cluster has been sent and parsed.
    settings.watching.label_selectors["", "v1", "pods"] = naming.LABEL_PHASE


# The indices are coroutines: kopf runs a plain function in its thread pool, a hand-off per
# event that cost more than the indexing itself.
@kopf.index(GROUP, VERSION, "executions")
async def executions_by_key(body: kopf.Body, **_: Any) -> dict[observed.IndexKey, JsonObject]:
    return observed.execution_entries(body)


@kopf.index(GROUP, VERSION, "phases")
async def phases_by_owner(body: kopf.Body, **_: Any) -> dict[str, JsonObject]:
    return observed.phase_entry(body)


@kopf.index(GROUP, VERSION, "executionqueues")
async def execution_queues_by_name(
    body: kopf.Body, **_: Any
) -> dict[observed.ExecutionKey, JsonObject]:
    return observed.execution_entry(body)


@kopf.index(GROUP, VERSION, "cronexecutions")
async def cron_executions_by_name(
    body: kopf.Body, **_: Any
) -> dict[observed.ExecutionKey, JsonObject]:
    return observed.execution_entry(body)


@kopf.index("", "v1", "pods", labels={naming.LABEL_PHASE: kopf.PRESENT})
async def pods_by_name(body: kopf.Body, **_: Any) -> dict[observed.ExecutionKey, JsonObject]:
    return observed.pod_entry(body)


@kopf.on.startup()
async def start(
    settings: kopf.OperatorSettings, memo: kopf.Memo, logger: kopf.Logger, **indices: Any
) -> None:
    configure(settings)
    config: OperatorConfig = memo.get("config") or OperatorConfig()
    kube = await Kube.connect()
    election = config.leader_election
    leadership = None if election is None else Leadership(kube, election)
    storage = await _storage(kube, config, logger)
    # kopf passes each index under its function's name; they fill as the watches start.
    watched = observed.Observed(
        indices["executions_by_key"],
        indices["phases_by_owner"],
        indices["pods_by_name"],
        indices["cron_executions_by_name"],
        indices["execution_queues_by_name"],
    )
    memo["operator"] = operator = Operator(kube, config, storage, watched, leadership)
    operator.start()


async def _storage(kube: Kube, config: OperatorConfig, logger: kopf.Logger) -> PhaseStorage | None:
    """The store, and the credentials endpoint through which phase sidecars reach it."""
    try:
        settings = StorageSettings.from_environment()
    except StorageNotConfigured:
        logger.warning(
            "no artifact storage: set AGENTJOBS_S3_ENDPOINT (and _BUCKET, _ACCESS_KEY, "
            "_SECRET_KEY) to harvest phase outputs; until then the artifact rule is not applied"
        )
        return None
    logger.info("artifacts are stored in %s, bucket %s", settings.endpoint, settings.bucket)
    store = ObjectStore(settings)
    policy = BucketPolicy(settings.bucket, config.allowed_buckets)
    # Unfenced: any replica may answer sidecars (it only reads Phases), leading or not.
    service = credential_service.build(kube, store, policy, config.credentials)
    try:
        await service.start()
    except credential_service.ListenFailed as error:
        raise kopf.PermanentError(str(error)) from None  # not retried: `agentjobs run` exits
    return PhaseStorage(store, policy, service)


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    operator: Operator | None = memo.get("operator")
    if operator is not None:
        if operator.storage is not None:
            await operator.storage.credentials.stop()
        await operator.stop()


@kopf.on.event(GROUP, VERSION, "executions")
async def execution_event(
    *,
    event: kopf.RawEvent,
    body: kopf.Body,
    namespace: str | None,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    if not namespace:
        return
    if event["type"] != "DELETED":
        await memo["operator"].execution_seen(dict(body))
    else:
        memo["operator"].execution_deleted(dict(body))
    # Ended or gone, it frees its place in its queue (R75): once the watch shows it, which is
    # what the decisions read.
    queue = body.get("spec", {}).get("queue")
    if queue and (event["type"] == "DELETED" or body.get("status", {}).get("finishedAt")):
        memo["operator"].queue_changed(namespace, queue)
    # A run that ends, or goes, matters to its CronExecution (Forbid, history, status).
    for ref in body["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "CronExecution":
            await memo["operator"].reconcile_cron(namespace, ref["name"])


@kopf.on.event(GROUP, VERSION, "executionqueues")
async def execution_queue_event(
    *, name: str, namespace: str | None, memo: kopf.Memo, **_: Any
) -> None:
    if namespace:
        memo["operator"].queue_changed(namespace, name)


@kopf.on.event(GROUP, VERSION, "cronexecutions")
async def cron_execution_event(
    *,
    event: kopf.RawEvent,
    name: str,
    namespace: str | None,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    if event["type"] != "DELETED" and namespace:
        await memo["operator"].reconcile_cron(namespace, name)


@kopf.on.event(GROUP, VERSION, "phases")
async def phase_event(
    *,
    event: kopf.RawEvent,
    body: kopf.Body,
    name: str,
    namespace: str | None,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    operator: Operator = memo["operator"]
    if not namespace:
        return
    phase = dict(body)
    if event["type"] == "DELETED":
        operator.phase_deleted(namespace, name, phase["metadata"]["uid"])
    else:
        operator.phase_seen(namespace, name, phase)
    # A deleted Phase matters to its Execution too: deleted from outside, it ends it (R22a).
    execution = phase.get("spec", {}).get("executionName")
    if execution and (event["type"] == "DELETED" or operator.executions.phase_changed(phase)):
        await operator.reconcile(namespace, execution)


@kopf.on.event("", "v1", "pods", labels={naming.LABEL_PHASE: kopf.PRESENT})
async def pod_event(
    *,
    event: kopf.RawEvent,
    body: kopf.Body,
    labels: kopf.Labels,
    namespace: str | None,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    if event["type"] != "DELETED" and namespace:
        memo["operator"].pod_seen(namespace, labels[naming.LABEL_PHASE], dict(body))
