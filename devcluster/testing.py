"""Helpers for tests that drive the local cluster: the cluster handle, kubectl, and knobs.

Knobs for chaos tests, plain functions (each takes an optional `layout`, default the
cluster in $AGENTJOBS_CLUSTER_DIR). The node's knobs are POSTs to its HTTPS server on
loopback, allowed for the admin certificate only, and last until the node restarts.

- `drop_log_streams(namespace, pod, container, *, after_bytes, times=1)`: the next
  `times` follow streams (`kubectl logs -f`) of that container are cut (the connection
  aborted) after `after_bytes` bytes; later ones are served normally. `times=None`
  drops every follow stream until replaced; `times=0` removes the rule. The pod need
  not exist yet.
- `evict_pod(namespace, pod, *, message=None, grace_period_seconds=1)`: the eviction
  manager's kill: containers get SIGTERM, SIGKILL after the grace period (at least 2 s),
  then the pod is Failed, reason Evicted, with `message` and condition DisruptionTarget
  (True, TerminationByKubelet); a Warning event Evicted. The pod stays in the API.
- `pause_heartbeats()` / `resume_heartbeats()`: stop and resume the node's Lease
  renewals and NodeStatus updates; Ready turns Unknown (and the node gets the
  node.kubernetes.io/unreachable taint) within about 16 s. Pods keep running.
- `set_container_log_max_size(namespace, pod, size_bytes)`: the containerLogMaxSize for
  that pod's containers (None: the node's, 10Mi unless
  AGENTJOBS_NODE_CONTAINER_LOG_MAX_SIZE was set); sizes are checked every second.
- `set_stream_idle_timeout(namespace, pod, seconds)`: streamingConnectionIdleTimeout for
  follow streams of that pod (None: the node's, 4h unless
  AGENTJOBS_NODE_STREAMING_IDLE_TIMEOUT was set); an idle stream's connection is closed.
- `stop_node()` / `start_node()`: stop the node process (it kills its containers; they
  are ContainerStatusUnknown when it starts again) and start it, waiting until Ready.
- `restart(component)`: stop and start one of "apiserver", "node", "s3" (versitygw), or
  any component's own name ("minio"), waiting until healthy; also `python -m devcluster
  restart`.
- `stop_s3(store)` / `start_s3(store)`: an outage of one S3 store ("versitygw" or "minio"),
  and its end, waiting until the store is healthy; the other store keeps running.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devcluster import cluster
from devcluster.components import NODE_MODULE
from devcluster.layout import LOOPBACK, NODE_NAME, NODE_PORT, Layout, default_layout
from devcluster.probes import admin_tls, node_ready
from devcluster.stores import S3_STORES


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

    def s3_env(self, store: str) -> dict[str, str]:
        """`env` with AGENTJOBS_S3_ENDPOINT and the keys of that S3 store instead."""
        return cluster.environment(self.layout, store)


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


def _node_knob(knob: str, body: dict[str, Any], layout: Layout | None) -> Any:
    layout = layout or default_layout()
    request = urllib.request.Request(
        f"https://{LOOPBACK}:{NODE_PORT}/devcluster/{knob}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10, context=admin_tls(layout)) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        detail = error.read().decode()
        raise AssertionError(f"node knob {knob}: HTTP {error.code}: {detail}") from None


def drop_log_streams(
    namespace: str,
    pod: str,
    container: str,
    *,
    after_bytes: int,
    times: int | None = 1,
    layout: Layout | None = None,
) -> None:
    body = {
        "namespace": namespace,
        "pod": pod,
        "container": container,
        "afterBytes": after_bytes,
        "times": times,
    }
    _node_knob("log-drops", body, layout)


def evict_pod(
    namespace: str,
    pod: str,
    *,
    message: str | None = None,
    grace_period_seconds: int = 1,
    layout: Layout | None = None,
) -> None:
    body = {
        "namespace": namespace,
        "pod": pod,
        "message": message,
        "gracePeriodSeconds": grace_period_seconds,
    }
    _node_knob("evict", body, layout)


def pause_heartbeats(layout: Layout | None = None) -> None:
    _node_knob("heartbeats", {"paused": True}, layout)


def resume_heartbeats(layout: Layout | None = None) -> None:
    _node_knob("heartbeats", {"paused": False}, layout)


def set_container_log_max_size(
    namespace: str, pod: str, size_bytes: int | None, layout: Layout | None = None
) -> None:
    _node_knob("log-max-size", {"namespace": namespace, "pod": pod, "bytes": size_bytes}, layout)


def set_stream_idle_timeout(
    namespace: str, pod: str, seconds: float | None, layout: Layout | None = None
) -> None:
    body = {"namespace": namespace, "pod": pod, "seconds": seconds}
    _node_knob("stream-idle-timeout", body, layout)


def stop_node(layout: Layout | None = None) -> None:
    cluster.stop_component("node", layout)


def start_node(layout: Layout | None = None) -> None:
    cluster.start_component("node", layout)


def restart(component: str, layout: Layout | None = None) -> None:
    cluster.restart(component, layout)


def stop_s3(store: str, layout: Layout | None = None) -> None:
    cluster.stop_component(S3_STORES[store].name, layout)


def start_s3(store: str, layout: Layout | None = None) -> None:
    cluster.start_component(S3_STORES[store].name, layout)
