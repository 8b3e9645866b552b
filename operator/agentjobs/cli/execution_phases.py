"""The Phases of one Execution, read with the user's kubeconfig, for the commands that show
what a run left (`agentjobs artifacts`, `agentjobs logs`)."""

from __future__ import annotations

import sys

from agentjobs.logic import naming
from agentjobs.models.resources import PhaseResourceStatus, PhaseSpec

PhaseRecord = tuple[PhaseSpec, PhaseResourceStatus]


def parse_execution(argument: str) -> tuple[str, str] | None:
    """``NAMESPACE/EXECUTION`` split in two, or None (with the error printed) when malformed."""
    namespace, _, execution = argument.partition("/")
    if not namespace or not execution:
        print("agentjobs: error: give the execution as NAMESPACE/EXECUTION", file=sys.stderr)
        return None
    return namespace, execution


async def execution_phases(namespace: str, execution: str) -> list[PhaseRecord]:
    """The Execution's Phases in their order; LookupError when the Execution is not there."""
    from agentjobs.adapters.kube import Kube  # heavy: loaded only by the commands that use it

    kube = await Kube.connect()
    try:
        path = f"/apis/agentjobs.io/v1alpha1/namespaces/{namespace}"
        if await kube.get(f"{path}/executions/{execution}") is None:
            raise LookupError(f"execution {namespace}/{execution} not found")
        items = await kube.list(
            f"{path}/phases",
            label_selector=f"{naming.LABEL_EXECUTION}={naming.label_value(execution)}",
        )
    finally:
        await kube.close()
    found = [
        (
            PhaseSpec.model_validate(item["spec"]),
            PhaseResourceStatus.model_validate(item.get("status") or {}),
        )
        for item in items
    ]
    return sorted((p for p in found if p[0].execution_name == execution), key=lambda p: p[0].index)
