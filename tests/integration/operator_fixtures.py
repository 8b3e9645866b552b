"""Running the operator against the local cluster, and reading what it wrote back."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devcluster.layout import HOST_ADDRESS
from devcluster.testing import Kubectl

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = Path(__file__).resolve().parent / "manifests"
AGENTJOBS = Path(sys.executable).parent / "agentjobs"


CREDENTIALS_LISTEN = "--credentials-listen"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST_ADDRESS, 0))
        port: int = probe.getsockname()[1]
        return port


class Service:
    """A TCP port in front of several replicas' credentials endpoints, as a Kubernetes Service
    is in front of their pods: each connection goes to the next replica that accepts it."""

    def __init__(self, backends: list[int]) -> None:
        self.port = free_port()
        self._backends = backends
        self._next = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    def __enter__(self) -> Service:
        self._thread.start()
        start = asyncio.start_server(self._forward, HOST_ADDRESS, self.port)
        self._server = asyncio.run_coroutine_threadsafe(start, self._loop).result(timeout=10)
        return self

    def __exit__(self, *_: object) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()
            await asyncio.sleep(0.1)

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _forward(self, client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        for _ in self._backends:
            port = self._backends[self._next % len(self._backends)]
            self._next += 1
            try:
                server, to_server = await asyncio.open_connection(HOST_ADDRESS, port)
            except OSError:
                continue  # that replica is gone: the next one
            await asyncio.gather(_pipe(client, to_server), _pipe(server, to_client))
            return
        to_client.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except OSError:
        pass
    finally:
        sink.close()


class OperatorProcess:
    """`agentjobs run` for one namespace, as a subprocess that can be killed and restarted."""

    def __init__(
        self, env: dict[str, str], namespace: str, log: Path, extra: list[str] | None = None
    ) -> None:
        self._env = {**os.environ, **env}
        self._namespace = namespace
        self._log = log
        self._extra = extra or []
        if not any(flag.startswith(CREDENTIALS_LISTEN) for flag in self._extra):
            # Its own port, kept across restarts: the URL in its pods' env stays right. On the
            # host's address on the node network, since a pod's loopback is its own.
            self._extra = [*self._extra, f"{CREDENTIALS_LISTEN}={HOST_ADDRESS}:{free_port()}"]
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self._log.open("ab") as log:
            self._process = subprocess.Popen(
                [
                    str(AGENTJOBS),
                    "run",
                    "--namespace",
                    self._namespace,
                    "--pending-timeout",
                    "4",
                    "--cancel-grace-seconds",
                    "5",
                    "--harvest-interval",
                    "1",
                    *self._extra,
                ],
                env=self._env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill(self) -> None:
        """SIGKILL: no cleanup, as a crash would leave it."""
        assert self._process is not None
        self._process.send_signal(signal.SIGKILL)
        self._process.wait(timeout=10)

    def send(self, signum: int) -> None:
        """Send a signal, e.g. SIGSTOP and SIGCONT to freeze and thaw it."""
        assert self._process is not None
        self._process.send_signal(signum)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def wait(self, timeout: float) -> int:
        """Its exit code, once it has exited on its own within ``timeout`` seconds."""
        assert self._process is not None
        return self._process.wait(timeout=timeout)

    def log(self) -> str:
        return self._log.read_text(errors="replace")


def running(process: OperatorProcess) -> Iterator[OperatorProcess]:
    """A fixture's body: the operator started, and once the test is done stopped, with the
    end of its log printed (pytest shows it when the test failed)."""
    process.start()
    yield process
    process.stop()
    print(process.log()[-20000:])


@pytest.fixture(scope="session")
def crds(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", str(REPO / "crds"))
    for crd in sorted((REPO / "crds").glob("*.yaml")):  # executions.yaml: its plural
        kubectl.run(
            "wait", "--for=condition=Established", f"crd/{crd.stem}.agentjobs.io", "--timeout=30s"
        )


@pytest.fixture
def operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator for the test's namespace, storing artifacts in the test's S3 store, with its
    default, restricted pod security."""
    yield from running(OperatorProcess(s3_env, namespace, tmp_path / "operator.log"))


@pytest.fixture
def git_operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator, allowed to clone from and push to the tests' git servers, which serve
    plain http on the host's address on the node network (R65)."""
    extra = [f"--git-allow=http://{HOST_ADDRESS}:*/*"]
    yield from running(OperatorProcess(s3_env, namespace, tmp_path / "operator.log", extra))


def apply_manifest(kubectl: Kubectl, namespace: str, name: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", str(MANIFESTS / name))


def wait_finished(kubectl: Kubectl, namespace: str, execution: str, timeout: int = 60) -> Any:
    kubectl.run(
        "wait",
        "-n",
        namespace,
        "--for=condition=Finished",
        f"execution/{execution}",
        f"--timeout={timeout}s",
        timeout=timeout + 10,
    )
    return kubectl.json("get", "-n", namespace, "execution", execution)["status"]


def start_long_phase(kubectl: Kubectl, namespace: str) -> None:
    """cancel.yaml's Execution applied and its one long phase running."""
    apply_manifest(kubectl, namespace, "cancel.yaml")
    wait_for(
        lambda: phase_status(kubectl, namespace, "cancel-0-long").get("status") == "running",
        what="the first phase to run",
    )


def stop_execution(kubectl: Kubectl, namespace: str, name: str, field: str) -> None:
    """Set ``spec.<field>`` (cancel or interrupt) on an Execution."""
    kubectl.run(
        "patch", "-n", namespace, "execution", name, "--type=merge",
        "-p", json.dumps({"spec": {field: True}}),
    )  # fmt: skip


def working_script(seconds: float = 0) -> str:
    """A phase's shell script: wait ``seconds``, write a note, report success."""
    return (
        f"sleep {seconds}\n"
        'echo done > "$AGENTJOBS_OUTPUT_DIR/notes.md"\n'
        """echo 'TASK_RESULT: {"success": true, "side_effects": "none", "comments": "done"}'\n"""
        "echo TASK_RESULT_END\n"
    )


def phase_status(kubectl: Kubectl, namespace: str, phase: str) -> Any:
    return kubectl.json("get", "-n", namespace, "phase", phase).get("status", {})


def wait_for(predicate: Any, timeout: float = 30, what: str = "condition") -> None:
    """Poll ``predicate`` (a kubectl failure, e.g. not found yet, counts as false)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if predicate():
                return
        except AssertionError:
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
