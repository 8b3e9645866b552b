"""Simulated nodes (kwok): pods scheduled there run by stages, never as processes.

An optional part of the cluster (`python -m devcluster up --kwok`), for measuring the operator
at a scale the real node cannot hold. kwok keeps the Nodes in `SIMULATED_NODES` Ready and
moves each pod bound to one of them through three stages: Running at once, every container
exited 0 after the duration in its `RUN_DURATION_VARIABLE` environment variable (a Go
duration such as "20s"; 1 s without one), removed once its deletion is asked for. Every
container's log is `AGENT_LOG`, a complete agent log with a TASK_RESULT block, served by kwok
from a file. The nodes are tainted, so only pods that tolerate `TOLERATION` and select
`NODE_SELECTOR` land there.

The nodes' kubelet endpoint is devcluster.kwok_logs, in front of kwok's own server: kwok keeps
a followed log open after its container has exited, which a kubelet never does.
"""

from __future__ import annotations

import datetime
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from devcluster.build import binary_path
from devcluster.components import Component
from devcluster.layout import (
    APISERVER_URL,
    KWOK_NODE_PORT,
    KWOK_SERVER_PORT,
    LOOPBACK,
    Layout,
)
from devcluster.probes import admin_tls, http_status, node_ready

SIMULATED_NODES = ("kwok-0",)
SIMULATED_LABEL = "agentjobs.io/simulated-node"
NODE_SELECTOR = {SIMULATED_LABEL: "kwok"}
TOLERATION = {"key": SIMULATED_LABEL, "operator": "Exists", "effect": "NoSchedule"}
RUN_DURATION_VARIABLE = "KWOK_RUN_DURATION"
# Pod IPs for up to 65,534 pods, outside the service range (10.0.0.0/24).
POD_CIDR = "10.128.0.0/16"
NODE_LEASE_SECONDS = 40
# Stages applied at once: kwok's default of 4 lags behind a thousand pods created together.
STAGE_PARALLELISM = 16

AGENT_LOG_LINES = (
    "Simulated agent on a kwok node: nothing ran.",
    'TASK_RESULT: {"success": true, "side_effects": "none", '
    '"comments": "Simulated run on a kwok node"}',
    "TASK_RESULT_END",
)


def agent_log_path(layout: Layout) -> Path:
    return layout.kwok / "agent.log"


def config_path(layout: Layout) -> Path:
    return layout.kwok / "kwok.yaml"


def _cri_log(lines: tuple[str, ...]) -> str:
    """The lines as a container runtime writes them (kwok reads that format)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return "".join(f"{stamp} stdout F {line}\n" for line in lines)


_NOW = "{{ $now := Now }}\n"


def _condition(kind: str, status: str) -> str:
    return (
        f"- type: {kind}\n"
        f'  status: "{status}"\n'
        "  lastProbeTime: null\n"
        "  lastTransitionTime: {{ $now | Quote }}\n"
    )


_NODE_READY = (
    _NOW
    + "conditions:\n"
    + "{{ range NodeConditions }}\n"
    + "- type: {{ .type | Quote }}\n"
    + "  status: {{ .status | Quote }}\n"
    + "  reason: {{ .reason | Quote }}\n"
    + "  message: {{ .message | Quote }}\n"
    + "  lastHeartbeatTime: {{ $now | Quote }}\n"
    + "  lastTransitionTime: {{ $now | Quote }}\n"
    + "{{ end }}\n"
    + "addresses:\n"
    + "- type: InternalIP\n"
    + "  address: {{ NodeIP | Quote }}\n"
    + "- type: Hostname\n"
    + "  address: {{ .metadata.name | Quote }}\n"
    + "daemonEndpoints:\n"
    + "  kubeletEndpoint:\n"
    + "    Port: {{ NodePort }}\n"
    + "allocatable: {cpu: '1k', memory: 1Ti, pods: '100k'}\n"
    + "capacity: {cpu: '1k', memory: 1Ti, pods: '100k'}\n"
    + "nodeInfo:\n"
    + "  architecture: amd64\n"
    + "  operatingSystem: linux\n"
    + '  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}\n'
    + '  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}\n'
    + "phase: Running\n"
)

_POD_RUNNING = (
    _NOW
    + "conditions:\n"
    + "".join(_condition(kind, "True") for kind in ("Initialized", "ContainersReady", "Ready"))
    + "{{ with .spec.initContainers }}\n"
    + "initContainerStatuses:\n"
    + "{{ range . }}\n"
    + "- name: {{ .name | Quote }}\n"
    + "  image: {{ .image | Quote }}\n"
    + "  ready: true\n"
    + "  started: false\n"
    + "  restartCount: 0\n"
    + "  state:\n"
    + "    terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, "
    + "finishedAt: {{ $now | Quote }}}\n"
    + "{{ end }}\n"
    + "{{ end }}\n"
    + "containerStatuses:\n"
    + "{{ range .spec.containers }}\n"
    + "- name: {{ .name | Quote }}\n"
    + "  image: {{ .image | Quote }}\n"
    + "  ready: true\n"
    + "  started: true\n"
    + "  restartCount: 0\n"
    + "  state:\n"
    + "    running: {startedAt: {{ $now | Quote }}}\n"
    + "{{ end }}\n"
    + "hostIP: {{ NodeIPWith .spec.nodeName | Quote }}\n"
    + "podIP: {{ PodIPWith .spec.nodeName false .metadata.uid .metadata.name"
    + " .metadata.namespace | Quote }}\n"
    + "phase: Running\n"
    + "startTime: {{ $now | Quote }}\n"
)

_POD_EXITED = (
    _NOW
    + "{{ $root := . }}\n"
    + "conditions:\n"
    + "".join(_condition(kind, "False") for kind in ("ContainersReady", "Ready"))
    + "containerStatuses:\n"
    + "{{ range $index, $container := .spec.containers }}\n"
    + "{{ $started := (index $root.status.containerStatuses $index).state.running.startedAt }}\n"
    + "- name: {{ $container.name | Quote }}\n"
    + "  image: {{ $container.image | Quote }}\n"
    + "  ready: false\n"
    + "  started: false\n"
    + "  restartCount: 0\n"
    + "  state:\n"
    + "    terminated: {exitCode: 0, reason: Completed, startedAt: {{ $started | Quote }}, "
    + "finishedAt: {{ $now | Quote }}}\n"
    + "{{ end }}\n"
    + "phase: Succeeded\n"
)


def _stage(name: str, kind: str, selector: list[dict[str, Any]], spec: dict[str, Any]) -> Any:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": kind},
            "selector": {"matchExpressions": selector},
            **spec,
        },
    }


def _absent(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "DoesNotExist"}


def _present(key: str) -> dict[str, Any]:
    return {"key": key, "operator": "Exists"}


def configuration(layout: Layout) -> list[Any]:
    """kwok's configuration documents: its options, the stages, and where logs come from."""
    run_duration = (
        f'.spec.containers.[].env.[]? | select(.name == "{RUN_DURATION_VARIABLE}") | .value'
    )
    ready = '.status.conditions.[] | select(.type == "Ready") | .status'
    return [
        {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokConfiguration",
            "options": {
                "cidr": POD_CIDR,
                "nodeIP": LOOPBACK,
                "nodePort": KWOK_NODE_PORT,
                "serverAddress": f"{LOOPBACK}:{KWOK_SERVER_PORT}",
                "manageNodesWithLabelSelector": SIMULATED_LABEL,
                "nodeLeaseDurationSeconds": NODE_LEASE_SECONDS,
                # Options left out get no default when a configuration file is given.
                "podPlayStageParallelism": STAGE_PARALLELISM,
                "nodePlayStageParallelism": 1,
                "nodeLeaseParallelism": 1,
                "podsOnNodeSyncParallelism": 1,
                "enableDebuggingHandlers": True,
                "enableProfilingHandler": False,
            },
        },
        _stage(
            "node-ready",
            "Node",
            [{"key": ready, "operator": "NotIn", "values": ["True"]}],
            {"next": {"statusTemplate": _NODE_READY}},
        ),
        _stage(
            "pod-running",
            "Pod",
            [_absent(".metadata.deletionTimestamp"), _absent(".status.podIP")],
            {"next": {"statusTemplate": _POD_RUNNING}},
        ),
        _stage(
            "pod-exited",
            "Pod",
            [
                _absent(".metadata.deletionTimestamp"),
                {"key": ".status.phase", "operator": "In", "values": ["Running"]},
            ],
            {
                "delay": {
                    "durationMilliseconds": 1000,
                    "durationFrom": {"expressionFrom": run_duration},
                },
                "next": {"statusTemplate": _POD_EXITED},
            },
        ),
        _stage(
            "pod-removed",
            "Pod",
            [_present(".metadata.deletionTimestamp"), _absent(".metadata.finalizers")],
            {"next": {"delete": True}},
        ),
        {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "ClusterLogs",
            "metadata": {"name": "agent-log"},
            "spec": {"logs": [{"logsFile": str(agent_log_path(layout)), "follow": True}]},
        },
    ]


def _write_configuration(layout: Layout) -> Path:
    layout.kwok.mkdir(parents=True, exist_ok=True)
    agent_log_path(layout).write_text(_cri_log(AGENT_LOG_LINES))
    path = config_path(layout)
    # JSON documents are YAML documents.
    path.write_text("".join(f"---\n{json.dumps(doc, indent=1)}\n" for doc in configuration(layout)))
    return path


def _kwok(layout: Layout) -> list[str]:
    return [
        str(binary_path("kwok")),
        f"--kubeconfig={layout.admin_kubeconfig}",
        f"--config={_write_configuration(layout)}",
    ]


def _kwok_healthy(layout: Layout) -> bool:
    return http_status(f"http://{LOOPBACK}:{KWOK_SERVER_PORT}/healthz") == 200


def _logs_front(layout: Layout) -> list[str]:
    pki = layout.pki
    return [
        sys.executable,
        "-m",
        "devcluster.kwok_logs",
        f"--kubeconfig={layout.admin_kubeconfig}",
        f"--address={LOOPBACK}",
        f"--port={KWOK_NODE_PORT}",
        f"--tls-cert={pki / 'kwok-serving.crt'}",
        f"--tls-key={pki / 'kwok-serving.key'}",
        f"--client-ca={pki / 'ca.crt'}",
        f"--kwok-url=http://{LOOPBACK}:{KWOK_SERVER_PORT}",
        *(f"--node={name}" for name in SIMULATED_NODES),
    ]


def _logs_front_healthy(layout: Layout) -> bool:
    url = f"https://{LOOPBACK}:{KWOK_NODE_PORT}/healthz"
    return http_status(url, admin_tls(layout)) == 200


KWOK = Component("kwok", (KWOK_SERVER_PORT,), _kwok, _kwok_healthy)
KWOK_LOGS = Component("kwok-logs", (KWOK_NODE_PORT,), _logs_front, _logs_front_healthy)
# In start order; they stop in reverse, before the rest of the cluster.
COMPONENTS = (KWOK, KWOK_LOGS)


def node_manifest(name: str) -> Mapping[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**NODE_SELECTOR, "kubernetes.io/hostname": name},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": [{"key": SIMULATED_LABEL, "value": "kwok", "effect": "NoSchedule"}]},
    }


def register_nodes(layout: Layout) -> None:
    """Create the simulated Nodes that do not exist yet (kwok then makes them Ready)."""
    for name in SIMULATED_NODES:
        request = urllib.request.Request(
            f"{APISERVER_URL}/api/v1/nodes",
            data=json.dumps(node_manifest(name)).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=10, context=admin_tls(layout)):
                pass
        except urllib.error.HTTPError as error:
            if error.code != 409:  # already registered
                raise


def nodes_ready(layout: Layout) -> bool:
    return all(node_ready(layout, name) for name in SIMULATED_NODES)
