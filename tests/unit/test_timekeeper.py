"""`agentjobs timekeeper` as the kubelet's probes meet it (a real process on loopback).

Cases: the heartbeat is answered 200 and the timeout probe 503 (a failure for the
kubelet), after which it exits 0 within seconds; SIGTERM ends it at once with 0;
without the heartbeat it exits by itself; an IPv6 pod IP works; no pod IP is a clear
error. R70: the stop probe passes until the stop file says anything (then fails, and the
timekeeper exits soon after), and fails once its own timeout has passed.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentjobs.kube import agent_timeout
from agentjobs.sidecars.timekeeper import AFTER_TIMEOUT_SECONDS, SILENCE_SECONDS

# Real processes that wait out the timekeeper's own seconds.
pytestmark = pytest.mark.slow

AGENTJOBS = [str(Path(sys.executable).parent / "agentjobs")]


def free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def timekeeper(host: str, *extra: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port(host)
    env = {**os.environ, agent_timeout.POD_IP_VARIABLE: host}
    process = subprocess.Popen([*AGENTJOBS, "timekeeper", "--port", str(port), *extra], env=env)
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((host, port), timeout=0.2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the timekeeper did not listen"
                time.sleep(0.05)
        yield process, base
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            code: int = response.status
            return code
    except urllib.error.HTTPError as error:
        return error.code


def test_it_answers_the_probes_and_exits_soon_after_the_timeout_probe() -> None:
    with timekeeper("127.0.0.1") as (process, base):
        assert get(base + agent_timeout.HEARTBEAT_PATH) == 200
        assert get(base + "/other") == 404
        assert process.poll() is None
        asked = time.monotonic()
        assert get(base + agent_timeout.TIMEOUT_PATH) == 503
        get(base + agent_timeout.HEARTBEAT_PATH)  # the agent runs through its grace
        assert process.wait(timeout=AFTER_TIMEOUT_SECONDS + 2) == 0
        assert time.monotonic() - asked >= AFTER_TIMEOUT_SECONDS - 0.1


def test_sigterm_ends_it_with_zero() -> None:
    with timekeeper("127.0.0.1") as (process, _base):
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=2) == 0


def test_without_a_heartbeat_it_exits_by_itself() -> None:
    with timekeeper("127.0.0.1") as (process, _base):
        assert process.wait(timeout=SILENCE_SECONDS + 3) == 0


def test_an_ipv6_pod_ip_works() -> None:
    try:
        free_port("::1")
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with timekeeper("::1") as (_process, base):
        assert get(base + agent_timeout.HEARTBEAT_PATH) == 200


def test_without_a_pod_ip_it_says_so() -> None:
    env = {k: v for k, v in os.environ.items() if k != agent_timeout.POD_IP_VARIABLE}
    result = subprocess.run([*AGENTJOBS, "timekeeper"], env=env, capture_output=True, text=True)
    assert result.returncode == 2
    assert agent_timeout.POD_IP_VARIABLE in result.stderr


def test_the_stop_probe_fails_once_the_stop_file_says_anything(tmp_path: Path) -> None:
    stop = tmp_path / "reason"
    stop.write_text("")  # the kubelet writes the file empty while there is no annotation
    with timekeeper("127.0.0.1", "--stop-file", str(stop)) as (process, base):
        for _ in range(3):
            assert get(base + agent_timeout.HEARTBEAT_PATH) == 200
            assert get(base + agent_timeout.STOP_PATH) == 200
        stop.write_text("BudgetExceeded")
        assert get(base + agent_timeout.STOP_PATH) == 503
        get(base + agent_timeout.HEARTBEAT_PATH)
        assert process.wait(timeout=AFTER_TIMEOUT_SECONDS + 2) == 0


def test_the_stop_probe_fails_once_its_timeout_has_passed(tmp_path: Path) -> None:
    args = ("--stop-file", str(tmp_path / "absent"), agent_timeout.TIMEOUT_ARGUMENT, "2")
    with timekeeper("127.0.0.1", *args) as (_process, base):
        assert get(base + agent_timeout.STOP_PATH) == 200
        until = time.monotonic() + 2.1
        while time.monotonic() < until:  # the agent runs on: its heartbeat keeps coming
            assert get(base + agent_timeout.HEARTBEAT_PATH) == 200
            time.sleep(0.3)
        assert get(base + agent_timeout.STOP_PATH) == 503
