"""N one-phase Executions at once on simulated (kwok) nodes, beside the same N as Jobs.

Starts the simulated nodes if they are not running (``devcluster up --kwok``), then
the operator for a fresh namespace, without artifact storage, as the chart's ServiceAccount
there (its Role, a token: the Job controller too runs with its ServiceAccount's token,
and both are ranked by the API server's priority and fairness), applies N one-phase
Executions at once, each pod tolerating and selecting the simulated nodes and running
for ``--run-seconds``, and waits until every one is Finished. Then, with the operator
stopped, the same N as Jobs through the Job controller, on the same nodes, in another
namespace. For each it prints:

- peak: the most running at once: Jobs whose pod's container runs, phases whose pod's
  container runs while the operator reads its log live (see ``Observed``);
- rate: N per minute, from the first apply to the last Finished (or Complete);
- API requests per phase (or Job): the API server's ``apiserver_request_total``, all
  clients together, diffed before and after, over N. Other clients of a shared cluster
  count too: run it on a quiet one;
- the operator's peak RSS (VmHWM) and CPU seconds, read from /proc as it ends;
- the CPU the cluster's own processes spent (``cluster_cpu``): the API server's work for
  each Execution is part of its cost on a machine whose cores they share;
- where the time went, pod by pod (``pod_timeline``): when each pod was made, how long
  the scheduler and node took to start it, its agent's run, and its owner's end;

and the Executions' figures over the Jobs' as ratios. The last line is::

    scale: N=<n> peak=<c> rate=<p>/min rss=<r>MiB requests/phase=<q> vs-jobs=<x>x

where ``vs-jobs`` is the requests per phase over the requests per Job. Run it from the
repository root, with the cluster up (``python -m devcluster up``)::

    python -m benchmarks.scale --phases 1000 [--run-seconds 45]

The operator is the ``agentjobs`` of this environment; put another checkout's
``operator/`` first on ``PYTHONPATH`` to measure that one instead.

benchmarks/scale_shards.py runs the same phases over several replicas.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from kubernetes_asyncio import client, config, watch

from benchmarks import cluster_cpu
from benchmarks.operator_process import (
    OperatorUsage,
    operator_usage,
    start_operator,
    start_profiler,
    stop_operator,
)
from benchmarks.pod_timeline import EXECUTION_LABEL, JOB_LABEL, Timeline
from devcluster import cluster, kwok
from devcluster.layout import APISERVER_URL, default_layout
from devcluster.probes import admin_tls

CRDS = Path(__file__).resolve().parent.parent / "crds"
CREATE_CONCURRENCY = 50
REQUEST_COUNTER = "apiserver_request_total{"
LABEL = re.compile(r'(\w+)="([^"]*)"')
NAMESPACE_DELETION_SECONDS = 300


@dataclass
class Observed:
    """What one namespace's watches saw: the pods running, and the owners finished.

    A Job runs while its pod's container runs. A phase runs while its pod's container runs
    and the operator reads its log live (the Phase's status holds a log checkpoint): a
    phase whose log stream waits for a connection until its agent has exited never counts.
    """

    live_logs_only: bool
    running: set[str] = field(default_factory=set)
    read_live: set[str] = field(default_factory=set)  # pods whose log the operator reads
    peak: int = 0
    pods: set[str] = field(default_factory=set)  # every pod seen, to tell a phase run twice
    attempts: dict[str, int] = field(default_factory=dict)  # by Phase
    finished: set[str] = field(default_factory=set)
    last_finished_at: float = 0.0
    # Each finished owner's verdict: an Execution's status; a Job's finishing condition.
    verdicts: Counter[str] = field(default_factory=Counter)
    timeline: Timeline = field(default_factory=lambda: Timeline(EXECUTION_LABEL))

    def _count(self) -> None:
        counted = self.running & self.read_live if self.live_logs_only else self.running
        self.peak = max(self.peak, len(counted))

    def pod(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        self.pods.add(name)
        self.timeline.pod(pod, time.monotonic())
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        if any("running" in (s.get("state") or {}) for s in statuses):
            self.running.add(name)
        else:
            self.running.discard(name)
        self._count()

    def phase(self, phase: dict[str, Any]) -> None:
        status = phase.get("status") or {}
        if status.get("attempt"):
            self.attempts[phase["metadata"]["name"]] = status["attempt"]
        pod_name = status.get("podName")
        if pod_name and status.get("status") == "running" and status.get("log"):
            self.read_live.add(pod_name)
            self._count()

    def owner(self, owner: dict[str, Any], wanted: str) -> None:
        name = owner["metadata"]["name"]
        for condition in (owner.get("status") or {}).get("conditions") or []:
            if condition["type"] == wanted and condition["status"] == "True":
                if name in self.finished:
                    return
                self.finished.add(name)
                self.last_finished_at = time.monotonic()
                self.timeline.owner_finished(name, self.last_finished_at)
                self.verdicts[(owner.get("status") or {}).get("status") or wanted] += 1


@dataclass(frozen=True)
class Run:
    count: int
    peak: int
    seconds: float
    requests: float
    pods: int
    # Phases that took more than one attempt (always 0 for Jobs, whose retries make pods).
    retried: int
    by_kind: Counter[str]  # requests by verb and resource
    verdicts: Counter[str]
    timeline: str  # where the time went, pod by pod (pod_timeline)
    cluster_cpu: str  # the cluster's processes' CPU during the run (cluster_cpu)

    @property
    def per_minute(self) -> float:
        return self.count * 60 / self.seconds

    @property
    def requests_each(self) -> float:
        return self.requests / self.count

    def breakdown(self) -> str:
        """The requests each by verb and resource, most first (those under 0.05 left out)."""
        rows = [
            f"  {count / self.count:5.2f} {kind}"
            for kind, count in self.by_kind.most_common()
            if count / self.count >= 0.05
        ]
        return "\n".join(rows)


def api_requests() -> Counter[str]:
    """The API server's request counts so far, by verb, resource and subresource, every
    client together."""
    url = f"{APISERVER_URL}/metrics"
    with urllib.request.urlopen(url, timeout=30, context=admin_tls(default_layout())) as response:
        text = response.read().decode()
    counts: Counter[str] = Counter()
    for line in text.splitlines():
        if line.startswith(REQUEST_COUNTER):
            labels, value = line[len(REQUEST_COUNTER) :].rsplit(" ", 1)
            found = dict(LABEL.findall(labels))
            kind = "/".join(filter(None, (found.get("resource"), found.get("subresource"))))
            counts[f"{found.get('verb', '?')} {kind}"] += float(value)
    return counts


def simulated_pod_settings(run_seconds: float) -> dict[str, Any]:
    """What puts a pod on the simulated nodes for `run_seconds` (PhaseSettings' names)."""
    return {
        "env": [{"name": kwok.RUN_DURATION_VARIABLE, "value": f"{run_seconds}s"}],
        "nodeSelector": kwok.NODE_SELECTOR,
        "tolerations": [kwok.TOLERATION],
    }


def execution(name: str, run_seconds: float) -> dict[str, Any]:
    phase = {
        "name": "run",
        "image": "busybox",
        "prompt": "go",
        **simulated_pod_settings(run_seconds),
    }
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {"phases": [phase]},
    }


def job(name: str, run_seconds: float) -> dict[str, Any]:
    settings = simulated_pod_settings(run_seconds)
    container = {"name": "agent", "image": "busybox", "env": settings["env"]}
    pod_spec = {
        "restartPolicy": "Never",
        "containers": [container],
        "nodeSelector": settings["nodeSelector"],
        "tolerations": settings["tolerations"],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": pod_spec}},
    }


async def _watch(handle: Callable[[dict[str, Any]], None], list_function: Any, *args: Any) -> None:
    """Hand every object the watch shows to ``handle`` as its JSON (the generated models
    cost the benchmark a tenth of a core, taken from what it measures), watching again
    when the watch ends or fails:
    on a new cluster the first watch of a CRD's objects can come before the API serves
    them, and a watch that died there once left a run waiting for ever on its Executions."""
    while True:
        try:
            objects = watch.Watch(return_type="object")
            async with objects.stream(list_function, *args, timeout_seconds=300) as stream:
                async for event in stream:
                    handle(event["object"])
        except (client.ApiException, aiohttp.ClientError, TimeoutError) as error:
            print(f"watch again after: {error}".splitlines()[0], file=sys.stderr, flush=True)
            await asyncio.sleep(1)


async def _create_all(names: list[str], create: Callable[[str], Awaitable[Any]]) -> None:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(name: str) -> None:
        async with gate:
            await create(name)

    await asyncio.gather(*(one(name) for name in names))


async def _wait_all(observed: Observed, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(observed.finished) < len(names):
        if time.monotonic() > deadline:
            missing = sorted(set(names) - observed.finished)
            raise TimeoutError(f"{len(missing)} of {len(names)} unfinished, e.g. {missing[:5]}")
        await asyncio.sleep(0.2)


class Cluster:
    """The benchmark's API clients (kubernetes_asyncio, admin) and its namespaces."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.namespaces: list[str] = []

    async def namespace(self, purpose: str) -> str:
        name = f"scale-{purpose}-{uuid.uuid4().hex[:6]}"
        await self.core.create_namespace({"metadata": {"name": name}})
        self.namespaces.append(name)
        return name

    async def close(self) -> None:
        """Delete the namespaces and wait until they are gone: the deletion of a thousand
        objects loads the API server, and would count in the next run's requests."""
        for name in self.namespaces:
            await self.core.delete_namespace(name)
        deadline = time.monotonic() + NAMESPACE_DELETION_SECONDS
        for name in self.namespaces:
            while time.monotonic() < deadline:
                try:
                    await self.core.read_namespace(name)
                except client.ApiException as error:
                    if error.status == 404:
                        break
                    raise
                await asyncio.sleep(1)
        await self.api.close()


async def _measure(
    count: int,
    observed: Observed,
    watches: list[asyncio.Task[None]],
    create: Callable[[str], Awaitable[Any]],
    timeout: float,
) -> Run:
    try:
        await asyncio.sleep(2)  # the watches (and an operator) settle
        names = [f"s-{index:04d}" for index in range(count)]
        before = await asyncio.to_thread(api_requests)
        cpu_before = cluster_cpu.cluster_cpu(default_layout())
        started = time.monotonic()
        await _create_all(names, create)
        await _wait_all(observed, names, timeout)
        after = await asyncio.to_thread(api_requests)
        cpu_after = cluster_cpu.cluster_cpu(default_layout())
    finally:
        for task in watches:
            task.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
    by_kind = after - before
    return Run(
        count=count,
        peak=observed.peak,
        seconds=observed.last_finished_at - started,
        requests=sum(by_kind.values()),
        by_kind=by_kind,
        pods=len(observed.pods),
        retried=sum(1 for attempt in observed.attempts.values() if attempt > 1),
        verdicts=observed.verdicts,
        timeline=observed.timeline.describe(started),
        cluster_cpu=cluster_cpu.describe(cpu_before, cpu_after, count),
    )


def _timeout(count: int, run_seconds: float) -> float:
    return 120 + run_seconds + count * 0.5


async def measure_phases(
    kube: Cluster,
    count: int,
    run_seconds: float,
    log: Path,
    *,
    shards: int = 1,
    leader_election: bool = False,
    profile: Path | None = None,
) -> tuple[Run, OperatorUsage]:
    """`count` phases over `shards` namespaces, one operator replica owning each; with
    `profile`, the first replica's stacks sampled by py-spy go there (collapsed, as
    flamegraph tools read them)."""
    namespaces = [await kube.namespace("phases") for _ in range(shards)]
    operators = [
        start_operator(namespace, log, leader_election=leader_election) for namespace in namespaces
    ]
    profiler = None if profile is None else start_profiler(operators[0].pid, profile)
    observed = Observed(live_logs_only=True)
    custom = kube.custom.list_namespaced_custom_object
    watches = []
    for namespace in namespaces:
        watches += [
            asyncio.create_task(_watch(observed.pod, kube.core.list_namespaced_pod, namespace)),
            asyncio.create_task(
                _watch(observed.phase, custom, "agentjobs.io", "v1alpha1", namespace, "phases")
            ),
            asyncio.create_task(
                _watch(
                    lambda obj: observed.owner(obj, "Finished"),
                    custom,
                    "agentjobs.io",
                    "v1alpha1",
                    namespace,
                    "executions",
                )
            ),
        ]

    async def create(name: str) -> None:
        namespace = namespaces[int(name.removeprefix("s-")) % shards]
        await kube.custom.create_namespaced_custom_object(
            "agentjobs.io", "v1alpha1", namespace, "executions", execution(name, run_seconds)
        )

    try:
        run = await _measure(count, observed, watches, create, _timeout(count, run_seconds))
        usages = [operator_usage(operator.pid) for operator in operators]
    finally:
        for operator in operators:
            stop_operator(operator)
        if profiler is not None:
            profiler.wait(timeout=60)  # it writes its file once the operator has gone
    return run, OperatorUsage(
        peak_rss_mib=max(u.peak_rss_mib for u in usages),
        cpu_seconds=sum(u.cpu_seconds for u in usages),
    )


async def measure_jobs(kube: Cluster, count: int, run_seconds: float) -> Run:
    namespace = await kube.namespace("jobs")
    observed = Observed(live_logs_only=False, timeline=Timeline(JOB_LABEL))
    watches = [
        asyncio.create_task(_watch(observed.pod, kube.core.list_namespaced_pod, namespace)),
        asyncio.create_task(
            _watch(
                lambda obj: observed.owner(obj, "Complete"),
                kube.batch.list_namespaced_job,
                namespace,
            )
        ),
    ]

    async def create(name: str) -> None:
        await kube.batch.create_namespaced_job(namespace, job(name, run_seconds))

    return await _measure(count, observed, watches, create, _timeout(count, run_seconds))


def apply_crds() -> None:
    env = {**os.environ, **cluster.environment()}
    subprocess.run(["kubectl", "apply", "-f", str(CRDS)], env=env, check=True, capture_output=True)
    for name in ("executions.agentjobs.io", "phases.agentjobs.io"):
        wait = ["kubectl", "wait", "--for=condition=Established", f"crd/{name}", "--timeout=30s"]
        subprocess.run(wait, env=env, check=True, capture_output=True)


async def connect() -> Cluster:
    """Start the simulated nodes unless they run, apply this checkout's CRDs; clients as the
    cluster admin."""
    await asyncio.to_thread(cluster.up_simulated_nodes)
    await asyncio.to_thread(apply_crds)
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(default_layout().admin_kubeconfig), client_configuration=configuration
    )
    return Cluster(client.ApiClient(configuration))


def describe(what: str, run: Run) -> str:
    return (
        f"{run.count} {what}: peak {run.peak} running at once, {run.per_minute:.0f}/min "
        f"({run.seconds:.1f} s), {run.requests_each:.1f} API requests each, "
        f"{run.pods} pods, {run.retried} retried; ended "
        + ", ".join(f"{verdict} {n}" for verdict, n in run.verdicts.most_common())
    )


def summary_line(phases: Run, usage: OperatorUsage, jobs: Run) -> str:
    ratio = phases.requests_each / jobs.requests_each
    return (
        f"scale: N={phases.count} peak={phases.peak} rate={phases.per_minute:.0f}/min "
        f"rss={usage.peak_rss_mib:.0f}MiB requests/phase={phases.requests_each:.1f} "
        f"vs-jobs={ratio:.2f}x"
    )


async def main(count: int, run_seconds: float, log: Path, profile: Path | None) -> None:
    kube = await connect()
    try:
        phases, usage = await measure_phases(kube, count, run_seconds, log, profile=profile)
        print(describe("one-phase Executions", phases), flush=True)
        print(phases.breakdown(), phases.timeline, phases.cluster_cpu, sep="\n", flush=True)
        print(
            f"operator: peak RSS {usage.peak_rss_mib:.0f} MiB, {usage.cpu_seconds:.1f} CPU s",
            flush=True,
        )
        jobs = await measure_jobs(kube, count, run_seconds)
        print(describe("Jobs", jobs), flush=True)
        print(jobs.breakdown(), jobs.timeline, jobs.cluster_cpu, sep="\n", flush=True)
    finally:
        await kube.close()
    print(
        f"Executions / Jobs: peak {phases.peak / jobs.peak:.2f}x, "
        f"rate {phases.per_minute / jobs.per_minute:.2f}x, "
        f"requests {phases.requests_each / jobs.requests_each:.2f}x"
    )
    print(summary_line(phases, usage, jobs))


def arguments_parser(description: str, *, phases: int, log_name: str) -> argparse.ArgumentParser:
    """The flags both scale benchmarks take: N, the agents' run time, the operators' log."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--phases", type=int, default=phases, help="N (default: %(default)s)")
    parser.add_argument(
        "--run-seconds",
        type=float,
        # As long as the agents of the first measurement: long enough for a thousand
        # pods to be created and bound while the first still run.
        default=45.0,
        help="how long each simulated agent runs (default: %(default)s)",
    )
    parser.add_argument(
        "--operator-log",
        type=Path,
        default=default_layout().logs / log_name,
        help="where the operators' output goes (default: %(default)s)",
    )
    return parser


if __name__ == "__main__":
    parser = arguments_parser(__doc__.splitlines()[0], phases=130, log_name="scale-operator.log")
    parser.add_argument(
        "--profile",
        type=Path,
        help="sample the operator with py-spy and write its collapsed stacks here",
    )
    arguments = parser.parse_args()
    asyncio.run(
        main(arguments.phases, arguments.run_seconds, arguments.operator_log, arguments.profile)
    )
