"""`agentjobs timekeeper` as the kubelet's probes meet it (a real process on loopback).

Cases: the heartbeat is answered 200 and the timeout probe 503 (a failure for the
kubelet), after which it exits 0 within seconds; SIGTERM ends it at once with 0;
without the heartbeat it exits by itself; an IPv6 pod IP works; no pod IP is a clear
error. R70: the stop probe passes until the stop file says anything (then fails, and the
timekeeper exits soon after), and fails once its own timeout has passed; a stop probe is held
open while the agent may run on and fails as soon as the stop is written, while the heartbeat
is still answered at once; the operator's stop, POSTed with the attempt's token (and only
with it), fails the held probe at once; `agent_stop.push` tells a real timekeeper so.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agentjobs.adapters import agent_stop
from agentjobs.kube import agent_timeout
from agentjobs.sidecars.timekeeper import AFTER_TIMEOUT_SECONDS, HOLD_SECONDS, SILENCE_SECONDS

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
def timekeeper(
    host: str, *extra: str, port: int | None = None, token: str | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = port or free_port(host)
    env = {**os.environ, agent_timeout.POD_IP_VARIABLE: host}
    if token is not None:
        env[agent_timeout.STOP_TOKEN_VARIABLE] = token
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


def post(url: str, token: str, reason: bytes = b"BudgetExceeded") -> int:
    request = urllib.request.Request(url, data=reason, method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    return answered(request)


def get(url: str) -> int:
    return answered(urllib.request.Request(url))


def answered(request: urllib.request.Request) -> int:
    """The HTTP status of the timekeeper's answer."""
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
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


def test_a_held_stop_probe_fails_as_soon_as_the_stop_is_written(tmp_path: Path) -> None:
    stop = tmp_path / "reason"
    stop.write_text("")
    with timekeeper("127.0.0.1", "--stop-file", str(stop)) as (_process, base):
        asked = time.monotonic()
        assert get(base + agent_timeout.STOP_PATH) == 200
        assert time.monotonic() - asked >= HOLD_SECONDS - 0.05  # held while it may run on
        answers: list[tuple[int, float]] = []

        def probe() -> None:
            code = get(base + agent_timeout.STOP_PATH)
            answers.append((code, time.monotonic()))

        held = threading.Thread(target=probe)
        held.start()
        time.sleep(0.1)
        beat = time.monotonic()
        assert get(base + agent_timeout.HEARTBEAT_PATH) == 200  # not behind the held probe
        assert time.monotonic() - beat < HOLD_SECONDS / 2
        written = time.monotonic()
        stop.write_text("BudgetExceeded")
        held.join(timeout=2)
        [(code, answered)] = answers
        assert code == 503
        assert answered - written < 0.25  # within the hold, not at its end


def test_the_operators_stop_is_taken_with_the_attempts_token_only(tmp_path: Path) -> None:
    stop = tmp_path / "reason"
    stop.write_text("")
    args = ("--stop-file", str(stop))
    with timekeeper("127.0.0.1", *args, token="right") as (_process, base):
        url = base + agent_timeout.STOP_PATH
        assert post(url, "wrong") == 403
        assert post(url, "") == 403
        assert get(url) == 200  # a refused stop stops nothing
        assert post(url, "right") == 202
        asked = time.monotonic()
        assert get(url) == 503
        assert time.monotonic() - asked < HOLD_SECONDS / 2


def test_without_a_token_no_stop_is_taken_over_the_network(tmp_path: Path) -> None:
    with timekeeper("127.0.0.1", "--stop-file", str(tmp_path / "absent")) as (_process, base):
        assert post(base + agent_timeout.STOP_PATH, "") == 403
        assert get(base + agent_timeout.STOP_PATH) == 200


def test_the_operator_tells_a_real_timekeeper_its_stop(tmp_path: Path) -> None:
    token = agent_stop.token("phase-uid", "work-a1")
    assert token != agent_stop.token("phase-uid", "work-a2")
    port = agent_timeout.TIMEKEEPER_PORT
    args = ("--stop-file", str(tmp_path / "absent"))
    with timekeeper("127.0.0.1", *args, port=port, token=token) as (_process, base):
        assert not asyncio.run(agent_stop.push("127.0.0.1", "not-the-token", "BudgetExceeded"))
        assert get(base + agent_timeout.STOP_PATH) == 200
        assert asyncio.run(agent_stop.push("127.0.0.1", token, "BudgetExceeded"))
        assert get(base + agent_timeout.STOP_PATH) == 503
