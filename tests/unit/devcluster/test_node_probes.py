"""The process node's probes, as the kubelet runs them (pkg/kubelet/prober, pkg/probe).

Cases: a probe's fields with the API's defaults and named ports; exec probes left out,
not failed; an HTTP probe succeeds on 2xx and 3xx and fails on other codes, a refused
connection and a server that does not answer in timeoutSeconds; a TCP probe; results
count once they repeat failureThreshold/successThreshold times; a liveness failure
kills the container alone (with the probe's grace) only while another regular
container keeps running or it will be restarted, else the whole pod with the pod's
grace; a deletion's grace wins over the probe's; each pod has its own loopback IP.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from devcluster.node.network import pod_ip
from devcluster.node.probes import (
    LIVENESS,
    READINESS,
    Probe,
    Thresholds,
    container_probes,
    kill_grace,
    liveness_kill,
    parse_probe,
    run_probe,
)
from devcluster.node.records import ContainerRecord

Obj = dict[str, Any]


def test_a_probe_gets_the_api_defaults_and_resolves_named_ports() -> None:
    container = {"name": "c", "ports": [{"name": "web", "containerPort": 8080}]}
    probe = parse_probe("livenessProbe", {"httpGet": {"port": "web"}}, container)
    assert (probe.kind, probe.port, probe.path, probe.scheme) == (LIVENESS, 8080, "/", "http")
    assert (probe.period, probe.timeout, probe.failure_threshold, probe.grace) == (10, 1, 3, None)
    timed = parse_probe(
        "readinessProbe",
        {"tcpSocket": {"port": 81}, "initialDelaySeconds": 5, "periodSeconds": 2},
        container,
    )
    assert (timed.kind, timed.path, timed.initial_delay, timed.period) == (READINESS, None, 5, 2)


def test_exec_and_startup_probes_are_left_out_not_failed() -> None:
    container = {
        "name": "c",
        "livenessProbe": {"exec": {"command": ["true"]}},
        "readinessProbe": {"httpGet": {"port": 80, "path": "/ready"}},
        "startupProbe": {"httpGet": {"port": 80}},
    }
    probes, skipped = container_probes(container)
    assert [p.kind for p in probes] == [READINESS]
    assert len(skipped) == 2


REQUESTS: list[bytes] = []


@asynccontextmanager
async def http_server(code: int, *, answer: bool = True) -> AsyncIterator[int]:
    handlers: list[asyncio.Task[Any]] = []
    release = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        try:
            REQUESTS.append(await reader.readuntil(b"\r\n\r\n"))
        except asyncio.IncompleteReadError:
            writer.close()  # a TCP probe only connects
            return
        if answer:
            writer.write(f"HTTP/1.1 {code} X\r\nContent-Length: 2\r\n\r\nok".encode())
            await writer.drain()
        else:
            await release.wait()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]
        release.set()
        await asyncio.gather(*handlers, return_exceptions=True)


def http(port: int) -> Probe:
    return Probe(LIVENESS, port, "/path", timeout=1)


def run(check: Callable[[], Any]) -> Any:
    return asyncio.run(check())


@pytest.mark.parametrize(("code", "ok"), [(200, True), (302, True), (404, False), (503, False)])
def test_an_http_probe_succeeds_on_2xx_and_3xx_only(code: int, ok: bool) -> None:
    async def check() -> tuple[bool, str]:
        async with http_server(code) as port:
            return await run_probe(http(port), "127.0.0.1")

    REQUESTS.clear()
    result, output = run(check)
    assert result is ok
    assert REQUESTS[0].startswith(b"GET /path HTTP/1.1\r\n")
    assert b"User-Agent: kube-probe/" in REQUESTS[0]
    assert output == ("" if ok else f"HTTP probe failed with statuscode: {code}")


def test_a_refused_or_silent_server_fails_the_probe() -> None:
    async def refused() -> tuple[bool, str]:
        async with http_server(200) as port:
            pass
        return await run_probe(http(port), "127.0.0.1")

    result, output = run(refused)
    assert result is False and "refused" in output.lower()

    async def silent() -> tuple[bool, str]:
        async with http_server(200, answer=False) as port:
            return await run_probe(http(port), "127.0.0.1")

    result, output = run(silent)
    assert result is False and "timed out after 1s" in output


def test_a_tcp_probe_needs_only_a_connection() -> None:
    async def check() -> tuple[bool, bool]:
        async with http_server(503) as port:
            open_ok, _ = await run_probe(Probe(READINESS, port, None), "127.0.0.1")
        closed_ok, _ = await run_probe(Probe(READINESS, port, None), "127.0.0.1")
        return open_ok, closed_ok

    assert run(check) == (True, False)


def test_results_count_once_they_repeat_enough() -> None:
    thresholds = Thresholds(Probe(LIVENESS, 1, "/", failure_threshold=3, success_threshold=1))
    assert [thresholds.settle(False) for _ in range(3)] == [False, False, True]
    assert thresholds.settle(True) is True
    assert [thresholds.settle(False) for _ in range(2)] == [False, False]


def _pod(names: list[str], policy: str = "Never", sidecar: str | None = None) -> Obj:
    spec: Obj = {"restartPolicy": policy, "containers": [{"name": n} for n in names]}
    if sidecar is not None:
        spec["initContainers"] = [{"name": sidecar, "restartPolicy": "Always"}]
    return {"metadata": {"uid": "u"}, "spec": spec}


def _running(*names: str) -> dict[str, ContainerRecord]:
    records = {}
    for name in names:
        record = ContainerRecord(name=name, image="i")
        record.set_running("process://x", "2026-01-01T00:00:00Z")
        records[name] = record
    return records


def test_the_last_running_container_that_fails_liveness_takes_the_whole_pod() -> None:
    plan = liveness_kill(
        _pod(["agent"], sidecar="harvester"), _running("agent", "harvester"), "agent"
    )
    assert plan.whole_pod  # a running sidecar does not count: keepCount is of regular ones


def test_a_container_is_killed_alone_while_another_regular_one_runs() -> None:
    plan = liveness_kill(_pod(["agent", "keeper"]), _running("agent", "keeper"), "agent")
    assert (plan.whole_pod, plan.restart) == (False, False)
    ended = _running("agent", "keeper")
    ended["keeper"].set_terminated(0, "Completed", None, "2026-01-01T00:00:05Z")
    assert liveness_kill(_pod(["agent", "keeper"]), ended, "agent").whole_pod


def test_a_container_that_will_be_restarted_is_killed_alone() -> None:
    for policy in ("Always", "OnFailure"):
        plan = liveness_kill(_pod(["agent"], policy), _running("agent"), "agent")
        assert (plan.whole_pod, plan.restart) == (False, True)
    sidecar = liveness_kill(_pod(["agent"], sidecar="s"), _running("agent", "s"), "s")
    assert (sidecar.whole_pod, sidecar.restart) == (False, True)


def test_the_kill_grace_is_the_deletions_then_the_probes_then_the_pods() -> None:
    probe = Probe(LIVENESS, 1, "/", grace=3)
    pod: Obj = {"metadata": {}, "spec": {"terminationGracePeriodSeconds": 3600}}
    assert kill_grace(pod, probe) == 3
    assert kill_grace(pod, Probe(LIVENESS, 1, "/")) == 3600
    pod["metadata"]["deletionGracePeriodSeconds"] = 30
    assert kill_grace(pod, probe) == 30


def test_each_pod_has_its_own_stable_loopback_ip_and_host_network_pods_the_nodes() -> None:
    pods = [{"metadata": {"uid": f"uid-{n}"}, "spec": {}} for n in range(200)]
    addresses = [pod_ip(p, "127.0.0.1") for p in pods]
    assert len(set(addresses)) == len(addresses)
    assert all(a.startswith("127.") and not a.startswith("127.0.0.") for a in addresses)
    assert pod_ip(pods[0], "127.0.0.1") == addresses[0]
    host = {"metadata": {"uid": "h"}, "spec": {"hostNetwork": True}}
    assert pod_ip(host, "10.0.0.5") == "10.0.0.5"
