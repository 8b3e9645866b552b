"""Time from a pod's creation to its container's start, and from the agent container's
termination to ``Finished`` on its Execution, on the local cluster's real node.

Applies N trivial one-phase Executions (default 50) to the running local
cluster (``python -m devcluster up``) with the operator started by this
script, then N plain Kubernetes Jobs running the same command, and prints
the median and p95 of both times, beside the same for the Jobs' pods and
their ``Complete`` condition, as ratios, in one run.

Every moment is observed by one watch client in this process: a pod's creation
when it is first seen, its start when its status first shows a container
running or terminated, its termination when its status first shows the first
container terminated, its end when its phase is first ``Succeeded`` or ``Failed``, an
Execution or Job's end when its condition first turns true. API timestamps are not used:
Kubernetes keeps them to the second.

Both controllers wait for the pod's end: the kubelet writes an eviction's or a deadline's
reason only there (and an Execution's harvester syncs until then). The kubelet holds that
end back until it has torn the pod down, so the time from a container's termination to its
owner's end is the node's share and the controller's; the time from the pod's end to its
owner's end, printed last, is the controller's alone.

    python benchmarks/completion_latency.py [--count 50] [--spacing 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from kubernetes_asyncio import client, config

from benchmarks.real_node import start_operator, watch_forever
from devcluster.images.catalog import BUSYBOX_NONROOT_IMAGE as IMAGE

COMMAND = [
    "sh",
    "-c",
    'echo done > "${AGENTJOBS_OUTPUT_DIR:-/tmp}/result.txt"; '
    "echo 'TASK_RESULT: {\"success\": true}'; echo TASK_RESULT_END",
]


class Observer:
    """Reception times of pod terminations and of finished Executions and Jobs."""

    def __init__(self) -> None:
        # By owner name (execution or job).
        self.created: dict[str, float] = {}
        self.started: dict[str, float] = {}
        self.terminated: dict[str, float] = {}
        self.ended: dict[str, float] = {}
        self.finished: dict[str, float] = {}

    def pod(self, pod: Any) -> None:
        labels = pod.metadata.labels or {}
        owner: str | None = labels.get("agentjobs.io/execution") or labels.get("job-name")
        if owner is None:
            return
        now = time.monotonic()
        self.created.setdefault(owner, now)
        for status in pod.status.container_statuses or []:
            if status.state and (status.state.running or status.state.terminated):
                self.started.setdefault(owner, now)
            if status.state and status.state.terminated:
                self.terminated.setdefault(owner, now)
        if pod.status.phase in ("Succeeded", "Failed"):
            self.ended.setdefault(owner, now)

    def conditions(self, name: str, conditions: list[Any], wanted: str) -> None:
        for condition in conditions or []:
            kind = condition["type"] if isinstance(condition, dict) else condition.type
            state = condition["status"] if isinstance(condition, dict) else condition.status
            if kind == wanted and state == "True" and name not in self.finished:
                self.finished[name] = time.monotonic()


def execution(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {"phases": [{"name": "run", "image": IMAGE, "prompt": "go", "command": COMMAND}]},
    }


def job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "run", "image": IMAGE, "command": COMMAND}],
                }
            },
        },
    }


def latencies(observer: Observer, names: list[str]) -> list[float]:
    return [observer.finished[n] - observer.terminated[n] for n in names]


def controller_latencies(observer: Observer, names: list[str]) -> list[float]:
    return [observer.finished[n] - observer.ended[n] for n in names]


def start_latencies(observer: Observer, names: list[str]) -> list[float]:
    return [observer.started[n] - observer.created[n] for n in names]


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def compare(
    title: str,
    labels: tuple[str, str],
    measure: Callable[[Observer, list[str]], list[float]],
    observer: Observer,
    executions: list[str],
    jobs: list[str],
) -> None:
    """One time's median and p95 for the Executions and the Jobs, and their ratio."""
    print(title)
    ex_median, ex_p95 = summary(measure(observer, executions))
    job_median, job_p95 = summary(measure(observer, jobs))
    for label, median, p95 in ((labels[0], ex_median, ex_p95), (labels[1], job_median, job_p95)):
        print(f"{label + ':':19} median {median * 1000:6.0f} ms   p95 {p95 * 1000:6.0f} ms")
    print(
        f"ratio (Execution / Job): median {ex_median / job_median:.2f}x   "
        f"p95 {ex_p95 / job_p95:.2f}x"
    )


async def wait_all(observer: Observer, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    times = (observer.finished, observer.terminated, observer.ended)
    while missing := [n for n in names if not all(n in seen for seen in times)]:
        if time.monotonic() > deadline:
            raise SystemExit(
                f"timed out; unfinished: {missing[:5]}; seen pods: {list(observer.terminated)[:5]}"
            )
        await asyncio.sleep(0.1)


async def main(count: int, spacing: float) -> None:
    await config.load_kube_config()
    api = client.ApiClient()
    core, batch, custom = (
        client.CoreV1Api(api),
        client.BatchV1Api(api),
        client.CustomObjectsApi(api),
    )
    namespace = f"bench-{uuid.uuid4().hex[:6]}"
    await core.create_namespace({"metadata": {"name": namespace}})
    operator = start_operator(namespace)
    observer = Observer()
    watchers = [
        asyncio.create_task(watch_forever(observer.pod, core.list_namespaced_pod, namespace)),
        asyncio.create_task(
            watch_forever(
                lambda obj: observer.conditions(
                    obj["metadata"]["name"], obj.get("status", {}).get("conditions"), "Finished"
                ),
                custom.list_namespaced_custom_object,
                "agentjobs.io",
                "v1alpha1",
                namespace,
                "executions",
            )
        ),
        asyncio.create_task(
            watch_forever(
                lambda obj: observer.conditions(
                    obj.metadata.name, obj.status.conditions, "Complete"
                ),
                batch.list_namespaced_job,
                namespace,
            )
        ),
    ]
    try:
        await asyncio.sleep(3)  # the operator and the watches settle
        executions = [f"ex-{i:03d}" for i in range(count)]
        for name in executions:
            await custom.create_namespaced_custom_object(
                "agentjobs.io", "v1alpha1", namespace, "executions", execution(name)
            )
            await asyncio.sleep(spacing)
        await wait_all(observer, executions, timeout=120 + count)
        jobs = [f"job-{i:03d}" for i in range(count)]
        for name in jobs:
            await batch.create_namespaced_job(namespace, job(name))
            await asyncio.sleep(spacing)
        await wait_all(observer, jobs, timeout=120 + count)
    finally:
        for task in watchers:
            if task.done() and task.exception():
                print("watch failed:", repr(task.exception()))
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        operator.terminate()
        operator.wait()
        await core.delete_namespace(namespace)
        await api.close()
    compare(
        f"{count} one-phase Executions and {count} Jobs, pod created -> container started",
        ("Execution's pod", "Job's pod"),
        start_latencies,
        observer,
        executions,
        jobs,
    )
    for what, measure in (
        ("container terminated -> finished", latencies),
        ("pod ended -> finished", controller_latencies),
    ):
        compare(
            f"{count} one-phase Executions and {count} Jobs, {what}",
            ("Execution Finished", "Job Complete"),
            measure,
            observer,
            executions,
            jobs,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument(
        "--spacing",
        type=float,
        default=1.0,
        help="seconds between two applies (default: %(default)s; each phase pod starts two "
        "Python sidecars, and much less than a second apart saturates a 2-core machine)",
    )
    arguments = parser.parse_args()
    asyncio.run(main(arguments.count, arguments.spacing))
