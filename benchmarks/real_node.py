"""What the benchmarks on the local cluster's real node share: the operator they start, with
artifact storage, and the watches they observe it through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from kubernetes_asyncio import watch

from devcluster import cluster, operator_account
from devcluster.layout import HOST_ADDRESS, default_layout


def start_operator(namespace: str) -> subprocess.Popen[bytes]:
    """`agentjobs run` for `namespace`, storing artifacts where the environment says, as
    the chart's ServiceAccount there (:mod:`devcluster.operator_account`); its log is
    appended to the cluster's ``logs/real-node-operator.log``."""
    layout = default_layout()
    kubeconfig = operator_account.operator_kubeconfig(
        {**os.environ, **cluster.environment(layout)}, namespace, layout.logs
    )
    with (layout.logs / "real-node-operator.log").open("ab") as log:
        return subprocess.Popen(
            [
                str(Path(sys.executable).parent / "agentjobs"),
                "run",
                "--namespace",
                namespace,
                # Its pods reach the host on the node network, not on their own loopback.
                f"--credentials-listen={HOST_ADDRESS}:0",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KUBECONFIG": str(kubeconfig)},
        )


async def watch_forever(handle: Any, list_function: Any, *args: Any) -> None:
    """Every object `list_function` lists, and each change to one, to `handle`."""
    while True:
        async with watch.Watch().stream(list_function, *args, timeout_seconds=300) as stream:
            async for event in stream:
                handle(event["object"])
