"""Per agent CLI image, the time from a phase pod's creation to the CLI's first request to the
model, and from the model's last answer to ``Finished`` on the Execution.

Runs N one-phase Executions per CLI (default 10), one at a time, on the running local cluster
(``python -m devcluster up``) with the operator started by this script and the scripted model
server (tests/model_server) answering each with one streamed report, and prints the medians.

Times are this process's clock: the pod's creation when the pod watch first sees it, the
first request and the last answer when the model server receives them (each answer is tiny
and sent at once), ``Finished`` when the Execution watch first sees it true.

    python -m benchmarks.agent_cli_latency [--count 10]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

from kubernetes_asyncio import client, config

from benchmarks.real_node import start_operator, watch_forever
from devcluster.images.catalog import AGENT_CLI_IMAGES
from devcluster.layout import HOST_ADDRESS
from devcluster.testing import load_images
from tests.model_server.agents import CLIS, Cli, report
from tests.model_server.script import Say
from tests.model_server.server import ModelServer


class Seen:
    def __init__(self) -> None:
        self.pod_created: dict[str, float] = {}  # by execution
        self.finished: dict[str, float] = {}

    def pod(self, pod: Any) -> None:
        execution = (pod.metadata.labels or {}).get("agentjobs.io/execution")
        if execution and pod.metadata.name.endswith("-a1"):
            self.pod_created.setdefault(execution, time.time())

    def execution(self, obj: dict[str, Any]) -> None:
        for condition in obj.get("status", {}).get("conditions") or []:
            if condition["type"] == "Finished" and condition["status"] == "True":
                self.finished.setdefault(obj["metadata"]["name"], time.time())


def execution(name: str, cli: Cli, server: ModelServer, key: str) -> dict[str, Any]:
    phase = {
        "name": "run",
        "image": cli.image,
        "prompt": "Report.",
        "transcriptFormat": cli.name,
        "env": cli.env(server.url, key),
    }
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {"phases": [phase]},
    }


async def main(count: int) -> None:
    load_images(AGENT_CLI_IMAGES)
    await config.load_kube_config()
    api = client.ApiClient()
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    namespace = f"bench-{uuid.uuid4().hex[:6]}"
    await core.create_namespace({"metadata": {"name": namespace}})
    operator = start_operator(namespace)
    seen = Seen()
    watchers = [
        asyncio.create_task(watch_forever(seen.pod, core.list_namespaced_pod, namespace)),
        asyncio.create_task(
            watch_forever(
                seen.execution,
                custom.list_namespaced_custom_object,
                "agentjobs.io",
                "v1alpha1",
                namespace,
                "executions",
            )
        ),
    ]
    results: dict[str, tuple[list[float], list[float]]] = {}
    try:
        with ModelServer(HOST_ADDRESS).running() as server:
            await asyncio.sleep(3)  # the operator and the watches settle
            for cli in CLIS:
                to_request, to_finished = [], []
                for index in range(count):
                    name, key = f"{cli.name}-{index}", f"key-{uuid.uuid4().hex}"
                    server.script(key, [Say((report(True, "measured"),))])
                    manifest = execution(name, cli, server, key)
                    await custom.create_namespaced_custom_object(
                        "agentjobs.io", "v1alpha1", namespace, "executions", manifest
                    )
                    deadline = time.monotonic() + 120
                    while name not in seen.finished:
                        if time.monotonic() > deadline:
                            raise SystemExit(f"{name} did not finish in 120 s")
                        await asyncio.sleep(0.05)
                    requests = server.requests(key)
                    to_request.append(requests[0].at - seen.pod_created[name])
                    to_finished.append(seen.finished[name] - requests[-1].at)
                results[cli.name] = (to_request, to_finished)
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        operator.terminate()
        operator.wait()
        await core.delete_namespace(namespace)
        await api.close()
    print(f"{count} one-phase Executions per CLI, medians")
    print(f"{'CLI':<12} {'pod created -> first request':>30} {'last answer -> Finished':>26}")
    for name, (to_request, to_finished) in results.items():
        print(
            f"{name:<12} {statistics.median(to_request) * 1000:27.0f} ms"
            f" {statistics.median(to_finished) * 1000:23.0f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10)
    asyncio.run(main(parser.parse_args().count))
