"""`agentjobs console` as the tests run it: a subprocess on a free loopback port, with the
user's kubeconfig or, as in the cluster, with its own ServiceAccount and user tokens."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

AGENTJOBS = Path(sys.executable).parent / "agentjobs"


def free_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def console(env: dict[str, str], log: Path, *flags: str) -> Iterator[str]:
    """The console's base URL, once it answers; stopped (its log printed) afterwards."""
    port = free_loopback_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(AGENTJOBS), "console", f"--listen=127.0.0.1:{port}", *flags],
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "the console did not start"
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        print(log.read_text(errors="replace")[-5000:])
