"""Helpers for tests that drive the local cluster: the cluster handle and a kubectl runner."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devcluster.components import NODE_MODULE
from devcluster.layout import NODE_NAME, Layout
from devcluster.probes import node_ready


@dataclass(frozen=True)
class DevCluster:
    layout: Layout
    # The variables from devcluster.cluster.environment(): KUBECONFIG, PATH, S3 endpoint, keys.
    env: dict[str, str]
    # True when this test session started the cluster and so must also stop it.
    owned: bool

    @property
    def has_node(self) -> bool:
        return NODE_MODULE.exists() and node_ready(self.layout, NODE_NAME)


class Kubectl:
    """The built kubectl, with the environment of a cluster (admin unless told otherwise)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = {**os.environ, **env}

    def with_kubeconfig(self, kubeconfig: Path) -> Kubectl:
        """The same kubectl acting as whoever `kubeconfig` authenticates."""
        return Kubectl({**self._env, "KUBECONFIG": str(kubeconfig)})

    def run(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["kubectl", *args],
            input=input,
            env=self._env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} exited {result.returncode}:\n{result.stderr}"
            )
        return result

    def json(self, *args: str) -> Any:
        """Run a read command with `-o json` and return the parsed output."""
        return json.loads(self.run(*args, "-o", "json").stdout)

    def apply(self, manifest: dict[str, Any], namespace: str) -> None:
        self.run("apply", "-n", namespace, "-f", "-", input=json.dumps(manifest))
