"""The scripted model server: one HTTP server for all three vendors' APIs, in a thread.

Each request is recorded with the time it arrived; the script it is answered from is the
one its API key names. A request whose key has no script, or whose script has run out, is
answered 500 and recorded as unexpected, so that a test sees what its CLI asked for."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.model_server.anthropic import Anthropic
from tests.model_server.gemini import Gemini
from tests.model_server.openai import OpenAI
from tests.model_server.script import Refuse, Turn
from tests.model_server.wire import Reply, Request, Vendor, json_reply

VENDORS: tuple[Vendor, ...] = (Anthropic(), OpenAI(), Gemini())


@dataclass(frozen=True)
class Recorded:
    vendor: str
    request: Request
    turn: bool  # answered from the script, not an aside
    at: float  # time.time() on arrival
    unexpected: str | None = None


class _Scripts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turns: dict[str, list[Turn]] = {}
        self._records: dict[str | None, list[Recorded]] = {}

    def set(self, key: str, turns: Sequence[Turn]) -> None:
        with self._lock:
            self._turns[key] = list(turns)
            self._records[key] = []

    def answer(self, vendor: Vendor, request: Request) -> Reply:
        key = vendor.api_key(request)
        at = time.time()
        with self._lock:
            turns = self._turns.get(key or "")
            is_turn = vendor.is_turn(request)
            problem = None
            if turns is None:
                problem = f"no script for the API key {key!r}"
            elif turns and isinstance(turns[0], Refuse):
                reply = vendor.answer(turns[0], request)
            elif not is_turn:
                reply = vendor.aside(request)
            elif turns:
                reply = vendor.answer(turns.pop(0), request)
            else:
                problem = "the script has no turn left"
            self._records.setdefault(key, []).append(
                Recorded(vendor.name, request, is_turn, at, problem)
            )
        return json_reply(500, {"error": {"message": problem}}) if problem else reply

    def records(self, key: str) -> list[Recorded]:
        with self._lock:
            return list(self._records.get(key, []))

    def unexpected(self) -> list[str]:
        with self._lock:
            return [
                f"{record.vendor} {record.request.path} key {key!r} at {record.at:.1f}: "
                f"{record.unexpected}"
                for key, records in self._records.items()
                for record in records
                if record.unexpected
            ]


class ModelServer:
    def __init__(self, host: str) -> None:
        self._scripts = _Scripts()
        self._http = ThreadingHTTPServer((host, 0), _handler(self._scripts))
        self._http.daemon_threads = True
        self.url = f"http://{host}:{self._http.server_address[1]}"

    def script(self, key: str, turns: Sequence[Turn]) -> None:
        """The turns the requests sent with API key `key` are answered with, in order."""
        self._scripts.set(key, turns)

    def requests(self, key: str) -> list[Recorded]:
        return self._scripts.records(key)

    def unexpected(self) -> list[str]:
        """Every request the server could not answer from a script, as a line each."""
        return self._scripts.unexpected()

    @contextmanager
    def running(self) -> Iterator[ModelServer]:
        thread = threading.Thread(target=self._http.serve_forever, name="model-server", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._http.shutdown()
            self._http.server_close()
            thread.join()


def _handler(scripts: _Scripts) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # chunked streams, and connections kept alive as SDKs want

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {}
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = Request(self.path, headers, body if isinstance(body, dict) else {})
            vendor = next((vendor for vendor in VENDORS if vendor.handles(self.path)), None)
            if vendor is None:
                self._send(json_reply(404, {"error": {"message": f"no such API: {self.path}"}}))
                return
            self._send(scripts.answer(vendor, request))

        def _send(self, reply: Reply) -> None:
            self.send_response(reply.status)
            self.send_header("content-type", reply.content_type)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in (*reply.chunks, b""):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()

        def log_message(self, format: str, *args: object) -> None:
            pass  # the records are the log

    return Handler
