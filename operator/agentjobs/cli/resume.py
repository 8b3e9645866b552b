"""`agentjobs resume NAMESPACE/NAME`: create an Execution that resumes an ended one (R48)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from agentjobs.cli import execution_phases
from agentjobs.contract.execution import resume
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resources import API_VERSION, ExecutionSpec

HELP = "resume an execution that failed, was cancelled or was interrupted"
DESCRIPTION = (
    "Create an Execution with the same spec that resumes NAMESPACE/NAME (spec.resumeFrom): "
    "the phases it completed are inherited, not run again, and their artifacts are handed on "
    "from its storage. The parent is left as it was. The new Execution is named "
    "<name>-r<n> (the lowest n not taken) unless --name is given. Uses the kubeconfig."
)
MAX_NUMBER = 1000  # names tried for -r<n> before giving up


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("execution", metavar="NAMESPACE/NAME")
    parser.add_argument("--name", metavar="NEW", help="the resumed Execution's name")


class ResumeError(Exception):
    """Why the resumed Execution was not created."""


async def _create(namespace: str, name: str, new_name: str | None) -> tuple[str, str]:
    """Create the resumed Execution; its name and what it inherits."""
    from agentjobs.adapters import paths
    from agentjobs.adapters.kube import Kube  # heavy: loaded only by the commands that use it

    kube = await Kube.connect()
    try:
        body = await kube.get(paths.execution(namespace, name))
        if body is None:
            raise ResumeError(f"execution {namespace}/{name} not found")
        parent = resume.Parent.from_api(body)
        spec = resume.resumed_spec(body["spec"], parent_name=name)
        resumed = ExecutionSpec.model_validate(spec)
        # The operator checks the same when it reconciles; here it stops a pointless create.
        inheritance = resume.inherit(resumed, parent, name=name)
        if isinstance(inheritance, SystemFailure):
            raise ResumeError(inheritance.message.removeprefix("resumeFrom: "))
        candidates = [new_name] if new_name else _default_names(name)
        for candidate in candidates:
            created = await kube.create(paths.execution(namespace), _manifest(candidate, spec))
            if created is not None:
                return candidate, resume.describe(inheritance, resumed)
        if new_name:
            raise ResumeError(f"execution {namespace}/{new_name} already exists")
        raise ResumeError(f"every name {name}-r1 to -r{MAX_NUMBER} is taken")
    finally:
        await kube.close()


def _default_names(name: str) -> list[str]:
    return [resume.resumed_name(name, number) for number in range(1, MAX_NUMBER + 1)]


def _manifest(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": spec,
    }


def run(args: argparse.Namespace) -> int:
    named = execution_phases.parse_execution(args.execution, "NAMESPACE/NAME")
    if named is None:
        return 2
    namespace, name = named
    from agentjobs.adapters.kube import ApiError

    try:
        created, inherits = asyncio.run(_create(namespace, name, args.name))
    except (ResumeError, ApiError, ValueError, OSError) as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 1
    print(f"execution {namespace}/{created} created, resuming {name}: {inherits}")
    return 0
