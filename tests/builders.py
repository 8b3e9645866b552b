"""What the tests build again and again: an agent's report, the block it ends its log with,
the shell line that prints that block, and an Execution of shell phases."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from devcluster.images.catalog import BUSYBOX_NONROOT_IMAGE


def report(success: bool = True, comments: str = "ok", **fields: Any) -> dict[str, Any]:
    """A TASK_RESULT body with no side effects, unless ``fields`` say otherwise."""
    return {"success": success, "side_effects": "none", "comments": comments, **fields}


def block(body: Mapping[str, Any]) -> str:
    """The TASK_RESULT block an agent ends its log with."""
    return f"TASK_RESULT: {json.dumps(body)}\nTASK_RESULT_END"


def echo_block(body: Mapping[str, Any]) -> str:
    """A shell command that prints ``block(body)``."""
    text = json.dumps(body)
    if "'" in text:
        raise ValueError(f"a single quote cannot be echoed in single quotes: {text}")
    return f"echo 'TASK_RESULT: {text}'; echo TASK_RESULT_END"


def execution(name: str, phases: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """An Execution manifest of ``phases``, the rest of its spec from ``spec``."""
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {**spec, "phases": phases},
    }


def shell_execution(
    name: str, *scripts: str, image: str = BUSYBOX_NONROOT_IMAGE, **defaults: Any
) -> dict[str, Any]:
    """An Execution whose phases ``step0``, ``step1``... run each script with ``sh -c``."""
    phases = [
        {"name": f"step{i}", "prompt": "Do it.", "args": [script]}
        for i, script in enumerate(scripts)
    ]
    defaults = {"image": image, "command": ["sh", "-c"], **defaults}
    return execution(name, phases, defaults=defaults)
