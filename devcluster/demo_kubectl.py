"""What the demo's steps share: kubectl (and helm) with the cluster's environment, the
demo's namespace, and how a step is announced or fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

NAMESPACE = "agentjobs-demo"
AGENTJOBS = Path(sys.executable).parent / "agentjobs"
TIMEOUT_SECONDS = 300.0


class DemoError(RuntimeError):
    """A step of the demo failed; the message says which and why."""


def step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


class Kubectl:
    """kubectl (and helm) with the cluster's environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = {**os.environ, **env}

    def run(self, *args: str, input: str | None = None, check: bool = True) -> str:
        return self.tool("kubectl", *args, input=input, check=check)

    def tool(self, *argv: str, input: str | None = None, check: bool = True) -> str:
        result = subprocess.run(
            list(argv), input=input, env=self.env, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise DemoError(f"`{' '.join(argv)}` failed:\n{result.stderr.strip()}")
        return result.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))
