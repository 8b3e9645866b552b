"""The Phases of one Execution, read with the user's kubeconfig, for the commands that show
what a run left (`agentjobs artifacts`, `agentjobs logs`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from agentjobs.adapters import paths
from agentjobs.adapters.store_common import StorageError
from agentjobs.kube import naming
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.resources import PhaseSpec

PhaseRecord = tuple[PhaseSpec, PhaseResourceStatus]


def run_on_phases(
    execution: str, phase: str | None, act: Callable[[list[PhaseRecord]], object]
) -> int:
    """Read ``NAMESPACE/EXECUTION``'s Phases (only ``phase``, when given) and ``act`` on them;
    the exit code, with any error on one line of stderr."""
    named = parse_execution(execution)
    if named is None:
        return 2
    from agentjobs.adapters.kube import ApiError

    try:
        phases = asyncio.run(execution_phases(*named))
        if phase is not None:
            phases = [p for p in phases if p[0].name == phase]
            if not phases:
                raise LookupError(f"execution {execution} has no phase {phase!r}")
        act(phases)
    except (LookupError, ApiError, StorageError, ValueError, OSError) as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 1
    return 0


def parse_execution(argument: str, form: str = "NAMESPACE/EXECUTION") -> tuple[str, str] | None:
    """``NAMESPACE/EXECUTION`` split in two, or None (with the error, naming the argument's
    ``form``, printed) when malformed."""
    namespace, _, execution = argument.partition("/")
    if not namespace or not execution:
        print(f"agentjobs: error: give the execution as {form}", file=sys.stderr)
        return None
    return namespace, execution


async def execution_phases(namespace: str, execution: str) -> list[PhaseRecord]:
    """The Execution's Phases in their order; LookupError when the Execution is not there."""
    from agentjobs.adapters.kube import Kube  # heavy: loaded only by the commands that use it

    kube = await Kube.connect()
    try:
        if await kube.get(paths.execution(namespace, execution)) is None:
            raise LookupError(f"execution {namespace}/{execution} not found")
        items = await kube.list(
            paths.phase(namespace),
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
