"""Creating an Execution's next Phase (R23), under a name the plan fixes.

The name is deterministic, so a Phase that is already there was made by an earlier
reconcile (or another operator) of this Execution, unless it belongs to an earlier
Execution of the same name that is still being collected: that one is waited for. An
admission refusal (a policy, a quota) ends the Execution with the API server's words.
"""

from __future__ import annotations

import logging
from typing import Any

from agentjobs.adapters import paths
from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.contract.execution import execution_plan
from agentjobs.contract.phase import phase_status
from agentjobs.kube import admission, ownership
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime.errors import RetryLater

logger = logging.getLogger(__name__)


async def create_phase(
    kube: Kube, body: dict[str, Any], spec: ExecutionSpec, plan: execution_plan.ExecutionPlan
) -> tuple[JsonObject, bool] | SystemFailure:
    """The Phase at ``plan.create_index`` and whether this call made it (False: it was there
    already, its event still to come); the Execution's failure when the API server refuses
    it for good."""
    assert plan.create_index is not None
    meta = body["metadata"]
    namespace = meta["namespace"]
    manifest = phase_status.phase_manifest(
        spec,
        namespace=namespace,
        execution_name=meta["name"],
        execution_uid=meta["uid"],
        index=plan.create_index,
        inputs=plan.inputs,
        repositories_before=plan.repositories_before,
        budget=plan.budget,
    )
    resource_name = manifest["metadata"]["name"]
    try:
        created = await kube.create(paths.phase(namespace), manifest)
        if created is not None:
            logger.info("created phase %s/%s", namespace, resource_name)
            return created, True
    except ApiError as error:
        refused = admission.refusal_blocker(
            code=error.status, reason=error.reason, message=error.message, subject="Phase"
        )
        if refused is None:
            raise
        logger.error("phase %s/%s was refused: %s", namespace, resource_name, error)
        message = f"the API server refused Phase {resource_name!r}: {error.message}"
        return refused.model_copy(update={"message": message})
    existing = await kube.get(paths.phase(namespace, resource_name))
    if existing is None or not ownership.owned_by(existing, meta["uid"]):
        # A Phase of an earlier Execution of this name, still being collected.
        reason = ownership.describe_foreign(existing) if existing else "it was just removed"
        raise RetryLater(f"cannot create Phase {resource_name!r} yet: {reason}")
    return existing, False
