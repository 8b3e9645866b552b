"""Helpers for tests that drive the local cluster: the cluster handle, kubectl, and faults.

The faults are made on the real components, plain functions (each takes an optional
`layout`, default the cluster in $AGENTJOBS_CLUSTER_DIR):

- `cut_kubelet_connections()`: every TCP connection to the kubelet's port is destroyed
  (`ss -K`), as a network fault would: the API server's proxied log streams, exec and
  port-forwards break; containers run on. Returns the connections cut, as `ss` lists them.
- `stop_kubelet()` / `start_kubelet()`: the kubelet process stopped (its containers live on
  under containerd, as on a node whose kubelet died) and started again, waiting until the
  node is Ready.
- `restart(component)`: stop and start one of "apiserver", "s3" (versitygw), or any
  component's own name ("minio", "kubelet", "containerd"), waiting until healthy; also
  `python -m devcluster restart`.
- `stop_s3(store)` / `start_s3(store)`: an outage of one S3 store ("versitygw" or "minio"),
  and its end, waiting until the store is healthy; the other store keeps running.

`load_images(recipes)` builds (unless cached) and imports into the node the images `up`
leaves out, the agent CLIs' (`devcluster.images.catalog.AGENT_CLI_IMAGES`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devcluster import cluster
from devcluster.images.build import build
from devcluster.images.recipes import Recipe
from devcluster.kubelet.node import KUBELET, import_images
from devcluster.layout import NODE_ADDRESS, NODE_PORT, Layout, default_layout
from devcluster.stores import S3_STORES


@dataclass(frozen=True)
class DevCluster:
    layout: Layout
    # The variables from devcluster.cluster.environment(): KUBECONFIG, PATH, S3 endpoint, keys.
    env: dict[str, str]
    # True when this test session started the cluster and so must also stop it.
    owned: bool

    def s3_env(self, store: str) -> dict[str, str]:
        """`env` with AGENTJOBS_S3_ENDPOINT and the keys of that S3 store instead."""
        return cluster.environment(self.layout, store)


class Kubectl:
    """The built kubectl, with the environment of a cluster (admin unless told otherwise)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = {**os.environ, **env}

    @property
    def env(self) -> dict[str, str]:
        """The environment kubectl runs with, for a command a test starts itself."""
        return dict(self._env)

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


def cut_kubelet_connections() -> list[str]:
    # `ss -K` needs the kernel's sock_destroy; `ss` prints each connection it closed.
    killed = subprocess.run(
        ["ss", "-K", "-tnH", "dst", NODE_ADDRESS, "dport", "=", f":{NODE_PORT}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return killed.splitlines()


def stop_kubelet(layout: Layout | None = None) -> None:
    cluster.stop_component(KUBELET.name, layout)


def start_kubelet(layout: Layout | None = None) -> None:
    cluster.start_component(KUBELET.name, layout)


def restart(component: str, layout: Layout | None = None) -> None:
    cluster.restart(component, layout)


def stop_s3(store: str, layout: Layout | None = None) -> None:
    cluster.stop_component(S3_STORES[store].name, layout)


def start_s3(store: str, layout: Layout | None = None) -> None:
    cluster.start_component(S3_STORES[store].name, layout)


def load_images(recipes: Sequence[Recipe], layout: Layout | None = None) -> None:
    archives = build(recipes, sys.stderr)
    import_images(layout or default_layout(), archives.values(), sys.stderr)
