"""The timekeeper: the regular container that lets the kubelet stop a timed-out agent alone.

See kube/agent_timeout.py for why it exists. It answers the kubelet's probes of the
agent on the pod's IP: the heartbeat (the agent's readiness probe) with 200, the
timeout probe (the agent's liveness probe, first sent at the deadline) with 503. It
exits 0 once the heartbeat has stopped (the agent ended), shortly after it failed the
timeout probe (the kubelet is then stopping the agent with the probe's grace), or on
SIGTERM; its exit is what lets the harvester's last sync begin.

In a stoppable pod (R70) the agent's liveness probe asks every second (``STOP_PATH``):
it is answered 503 once the stop file (the pod's ``agentjobs.io/stop`` annotation, written
by the kubelet) says anything, or once ``timeout_seconds`` have passed since the
timekeeper started; 200 before. The operator may also POST the stop to ``STOP_PATH`` with
the attempt's stop token (``stop_token``), which is faster than the kubelet's file. Each
stop probe is held open for most of its second and answered the moment the stop is known,
so a stop waits for the kubelet's next probe only in the short gap between two of them.
"""

from __future__ import annotations

import hmac
import http.server
import logging
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from agentjobs.kube import agent_timeout

log = logging.getLogger(__name__)

# The heartbeat comes every second (the first 1-2 s after the agent started, about when
# the timekeeper listens); this long without one, the agent has ended.
SILENCE_SECONDS = 3.0
# The kubelet starts the kill as soon as the probe fails; the timekeeper must still be
# running then, or the kubelet would kill the whole pod with the pod's grace.
AFTER_TIMEOUT_SECONDS = 2.0
# How long a stop probe is held while the agent may run on, and how often the stop file is
# read meanwhile: well within the kubelet's one-second period and the probe's timeout.
HOLD_SECONDS = 0.8
HOLD_CHECK_SECONDS = 0.05
MAX_REASON_BYTES = 200


@dataclass
class Timekeeper:
    """When the timekeeper is done, from what the kubelet asked and when."""

    started: float
    last_heartbeat: float | None = None
    timed_out_at: float | None = None
    stop_file: Path | None = None
    timeout_seconds: int | None = None
    stop_token: str | None = None
    told: str | None = None  # the stop the operator POSTed

    def tell(self, token: str, reason: str) -> bool:
        """The operator's stop, taken only with the attempt's token."""
        expected = self.stop_token
        if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
            return False
        self.told = reason or "stop"
        return True

    def heartbeat(self, now: float) -> None:
        self.last_heartbeat = now

    def timeout(self, now: float) -> None:
        if self.timed_out_at is None:
            self.timed_out_at = now

    def stop_reason(self, now: float) -> str | None:
        """Why the agent must stop now (R70), or None while it may run on."""
        reason = self.told or ""
        if not reason and self.stop_file is not None:
            try:
                reason = self.stop_file.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                reason = ""
        if reason:  # anyone who may patch the pod may write it: printable, and short
            printable = "".join(c for c in reason[:200] if c.isprintable())
            return f"stopped by the operator: {printable}"
        if self.timeout_seconds is not None and now - self.started >= self.timeout_seconds:
            return "the agent's timeoutSeconds is up"
        return None

    def done(self, now: float) -> bool:
        if self.timed_out_at is not None and now - self.timed_out_at >= AFTER_TIMEOUT_SECONDS:
            return True
        last = self.started if self.last_heartbeat is None else self.last_heartbeat
        return now - last >= SILENCE_SECONDS


def _handler(
    keeper: Timekeeper, clock: Callable[[], float]
) -> type[http.server.BaseHTTPRequestHandler]:
    class Probes(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == agent_timeout.HEARTBEAT_PATH:
                keeper.heartbeat(clock())
                self._answer(200, b"the agent is running\n")
            elif self.path == agent_timeout.TIMEOUT_PATH:
                self._stop("the agent's timeoutSeconds is up")
            elif self.path == agent_timeout.STOP_PATH:
                reason = keeper.stop_reason(clock())
                held_until = clock() + HOLD_SECONDS
                while reason is None and clock() < held_until:
                    time.sleep(HOLD_CHECK_SECONDS)
                    reason = keeper.stop_reason(clock())
                if reason is None:
                    self._answer(200, b"the agent may run on\n")
                else:
                    self._stop(reason)
            else:
                self._answer(404, b"not found\n")

        def do_POST(self) -> None:
            if self.path != agent_timeout.STOP_PATH:
                self._answer(404, b"not found\n")
                return
            length = min(int(self.headers.get("Content-Length") or 0), MAX_REASON_BYTES)
            reason = self.rfile.read(max(length, 0)).decode("utf-8", errors="replace")
            scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
            if scheme != "Bearer" or not keeper.tell(token, reason.strip()):
                self._answer(403, b"not the operator's stop\n")
                return
            self._answer(202, b"the agent will be stopped\n")

        def _stop(self, reason: str) -> None:
            if keeper.timed_out_at is None:
                log.info("%s; the kubelet stops the agent now", reason)
            keeper.timeout(clock())
            self._answer(503, f"{reason}\n".encode())

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # one line per probe would bury the timekeeper's log

    return Probes


class _Server(http.server.ThreadingHTTPServer):
    """A thread per probe: a held stop probe must not hold back the heartbeat."""

    daemon_threads = True


class _IPv6Server(_Server):
    address_family = socket.AF_INET6  # an IPv6 pod IP


def serve(
    host: str,
    port: int,
    clock: Callable[[], float] = time.monotonic,
    *,
    stop_file: Path | None = None,
    timeout_seconds: int | None = None,
    stop_token: str | None = None,
) -> None:
    """Answer probes until done; SIGTERM ends it at once."""
    keeper = Timekeeper(
        started=clock(),
        stop_file=stop_file,
        timeout_seconds=timeout_seconds,
        stop_token=stop_token,
    )
    stopping: list[int] = []

    def on_term(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    server_class = _IPv6Server if ":" in host else _Server
    with server_class((host, port), _handler(keeper, clock)) as server:
        server.timeout = 0.2
        log.info("answering the agent's probes on %s:%d", host, port)
        while not stopping and not keeper.done(clock()):
            server.handle_request()
    log.info("done: %s", "SIGTERM" if stopping else "the agent has ended or is being stopped")
