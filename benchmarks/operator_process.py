"""The operator as the scale benchmarks run it: a subprocess, and what it used, from /proc."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.cluster_cpu import process_cpu_seconds
from devcluster import cluster, operator_account

AGENTJOBS = Path(sys.executable).parent / "agentjobs"
PY_SPY = Path(sys.executable).parent / "py-spy"


@dataclass(frozen=True)
class OperatorUsage:
    peak_rss_mib: float
    cpu_seconds: float


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_operator(namespace: str, log: Path, *, leader_election: bool) -> subprocess.Popen[bytes]:
    """`agentjobs run` for `namespace` without artifact storage, as the chart runs it: as its
    ServiceAccount there, with the chart's Role and a token (the Job controller, too, runs
    with its ServiceAccount's token). With `leader_election`, it leads through the chart's
    Lease in that namespace (one share's leadership)."""
    env = {**os.environ, **cluster.environment()}
    env = {k: v for k, v in env.items() if not k.startswith("AGENTJOBS_S3_")}
    replicas = 2 if leader_election else 1
    kubeconfig = operator_account.operator_kubeconfig(env, namespace, log.parent, replicas=replicas)
    env["KUBECONFIG"] = str(kubeconfig)
    with log.open("ab") as output:
        return subprocess.Popen(
            [
                str(AGENTJOBS),
                "run",
                "--namespace",
                namespace,
                # The pods never run as processes; no user need be insisted on.
                "--pod-security-context",
                '{"seccompProfile": {"type": "RuntimeDefault"}}',
                f"--credentials-listen=127.0.0.1:{_free_port()}",
                *(["--leader-election", operator_account.LEASE] if leader_election else []),
            ],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def start_profiler(pid: int, output: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling `pid` until it exits, without pausing it (`--nonblocking`: the
    operator's own timing stays as measured), its stacks collapsed into `output`."""
    return subprocess.Popen(
        [str(PY_SPY), "record", "--pid", str(pid), "--nonblocking", "--format", "raw",
         "--rate", "100", "--output", str(output)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip


def operator_usage(pid: int) -> OperatorUsage:
    """Peak resident memory and CPU time so far of a running process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    peak_kib = next(
        int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")
    )
    return OperatorUsage(peak_kib / 1024, process_cpu_seconds(pid))


def stop_operator(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
