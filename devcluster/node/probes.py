"""Container probes as the kubelet runs them, and what a failed liveness probe kills.

Follows pkg/kubelet/prober (worker.go doProbe, prober.go runProbe), pkg/probe/http and
pkg/probe/tcp, and the liveness branch of computePodActions in
pkg/kubelet/kuberuntime/kuberuntime_manager.go. httpGet and tcpSocket probes are run;
exec and gRPC probes, and startup probes, are not (the node has no way into a
container's processes, and nothing here uses them): such a probe is left out with a
warning rather than failed, which would kill the container.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .records import ContainerRecord
from .status import is_sidecar

Obj = dict[str, Any]

LIVENESS = "Liveness"
READINESS = "Readiness"
KINDS = {"livenessProbe": LIVENESS, "readinessProbe": READINESS}
MAX_BODY_BYTES = 10 * 1024  # maxRespBodyLength, pkg/probe/http/http.go
USER_AGENT = "kube-probe/1.35"


class UnsupportedProbe(ValueError):
    """A probe the node does not run."""


@dataclass(frozen=True)
class Probe:
    """One probe of a container, with the API server's defaults filled in."""

    kind: str
    port: int
    path: str | None  # None for a tcpSocket probe
    scheme: str = "http"
    host: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    initial_delay: int = 0
    period: int = 10
    timeout: int = 1
    success_threshold: int = 1
    failure_threshold: int = 3
    grace: int | None = None


def resolve_port(port: Any, container: Obj) -> int:
    """A number, or the name of one of the container's ports (probe.ResolveContainerPort)."""
    if isinstance(port, int):
        return port
    for item in container.get("ports") or []:
        if item.get("name") == port:
            return int(item["containerPort"])
    raise UnsupportedProbe(f"couldn't find port: {port} in {container.get('name')}")


def parse_probe(field: str, probe: Obj, container: Obj) -> Probe:
    kind = KINDS.get(field)
    if kind is None:
        raise UnsupportedProbe(f"{field} is not run on this node")
    timing: dict[str, Any] = {
        "initial_delay": int(probe.get("initialDelaySeconds") or 0),
        "period": int(probe.get("periodSeconds") or 10),
        "timeout": int(probe.get("timeoutSeconds") or 1),
        "success_threshold": int(probe.get("successThreshold") or 1),
        "failure_threshold": int(probe.get("failureThreshold") or 3),
        "grace": probe.get("terminationGracePeriodSeconds"),
    }
    if "httpGet" in probe:
        action = probe["httpGet"]
        headers = tuple((h["name"], h["value"]) for h in action.get("httpHeaders") or [])
        return Probe(
            kind,
            resolve_port(action.get("port"), container),
            action.get("path") or "/",
            scheme=str(action.get("scheme") or "HTTP").lower(),
            host=action.get("host") or None,
            headers=headers,
            **timing,
        )
    if "tcpSocket" in probe:
        action = probe["tcpSocket"]
        port = resolve_port(action.get("port"), container)
        return Probe(kind, port, None, host=action.get("host") or None, **timing)
    raise UnsupportedProbe(f"{kind.lower()} probe handler {sorted(probe)} is not run on this node")


def container_probes(container: Obj) -> tuple[list[Probe], list[str]]:
    """The probes to run for a container, and why others are not run."""
    probes, skipped = [], []
    for field in ("livenessProbe", "readinessProbe", "startupProbe"):
        if container.get(field):
            try:
                probes.append(parse_probe(field, container[field], container))
            except UnsupportedProbe as error:
                skipped.append(str(error))
    return probes, skipped


def _dial_error(target: str, error: OSError) -> str:
    """As Go words it: dial tcp 10.0.0.1:80: connect: connection refused."""
    reason = os.strerror(error.errno).lower() if error.errno else str(error)
    return f"dial tcp {target}: connect: {reason}"


async def _http(probe: Probe, host: str) -> tuple[bool, str]:
    context = None
    if probe.scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # as the kubelet
    target = f"{host}:{probe.port}"
    try:
        reader, writer = await asyncio.open_connection(host, probe.port, ssl=context)
    except OSError as error:
        return False, f'Get "{probe.scheme}://{target}{probe.path}": {_dial_error(target, error)}'
    try:
        lines = [
            f"GET {probe.path} HTTP/1.1",
            f"Host: {target}",
            f"User-Agent: {USER_AGENT}",
            "Accept: */*",
            *(f"{name}: {value}" for name, value in probe.headers),
            "Connection: close",
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        status_line = (await reader.readline()).decode("latin-1").split()
        code = int(status_line[1]) if len(status_line) >= 2 and status_line[1].isdigit() else 0
        await reader.read(MAX_BODY_BYTES)
    except (OSError, UnicodeError) as error:
        return False, f'Get "{probe.scheme}://{target}{probe.path}": {error}'
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    if 200 <= code < 400:  # a redirect is a warning, which counts as success
        return True, ""
    return False, f"HTTP probe failed with statuscode: {code}"


async def _tcp(probe: Probe, host: str) -> tuple[bool, str]:
    try:
        _, writer = await asyncio.open_connection(host, probe.port)
    except OSError as error:
        return False, _dial_error(f"{host}:{probe.port}", error)
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True, ""


async def run_probe(probe: Probe, pod_ip: str) -> tuple[bool, str]:
    """One probe: success, and the output the kubelet would show for a failure."""
    host = probe.host or pod_ip
    try:
        check = _http(probe, host) if probe.path is not None else _tcp(probe, host)
        return await asyncio.wait_for(check, probe.timeout)
    except TimeoutError:
        return False, f"{probe.kind.lower()} probe timed out after {probe.timeout}s"


@dataclass
class Thresholds:
    """successThreshold/failureThreshold: a result counts once it repeats often enough."""

    probe: Probe
    last: bool | None = None
    run: int = 0

    def settle(self, result: bool) -> bool:
        """Record one result; True when it is the probe's result now."""
        self.run = self.run + 1 if result == self.last else 1
        self.last = result
        needed = self.probe.success_threshold if result else self.probe.failure_threshold
        return self.run >= needed


@dataclass(frozen=True)
class LivenessKill:
    """What the kubelet does about a container that failed its liveness probe."""

    whole_pod: bool  # KillPod: every container, with the pod's grace
    restart: bool = False


def liveness_kill(pod: Obj, records: Mapping[str, ContainerRecord], failed: str) -> LivenessKill:
    """The container alone (with the probe's grace) while another regular container keeps
    running or it will be restarted; otherwise the whole pod (``keepCount == 0``)."""
    spec = pod["spec"]
    if any(c["name"] == failed and is_sidecar(c) for c in spec.get("initContainers") or []):
        return LivenessKill(whole_pod=False, restart=True)
    restart = (spec.get("restartPolicy") or "Always") != "Never"
    kept = [
        c["name"]
        for c in spec.get("containers") or []
        if c["name"] != failed
        and (r := records.get(c["name"])) is not None
        and r.state == "running"
    ]
    return LivenessKill(whole_pod=not restart and not kept, restart=restart)


def kill_grace(pod: Obj, probe: Probe) -> float:
    """setTerminationGracePeriod for a probe's kill: a deletion's grace wins, then the
    probe's, then the pod's."""
    deletion = pod["metadata"].get("deletionGracePeriodSeconds")
    if deletion is not None:
        return float(deletion)
    if probe.grace is not None:
        return float(probe.grace)
    spec_grace = pod["spec"].get("terminationGracePeriodSeconds")
    return float(spec_grace if spec_grace is not None else 30)
