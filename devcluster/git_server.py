"""A real smart-HTTP git server for the tests: git's own ``git http-backend`` behind a small
front that checks tokens, and a pre-receive hook that refuses what a forge refuses.

- Every request needs HTTP Basic credentials whose password is a known token (the user name
  is free, as forges take it); anything else is a 401, so git reports its authentication
  failure as it would against a private repository.
- Each repository's pre-receive hook refuses a push to a protected branch, and a push whose
  new commits change a path under ``.github/workflows/`` when the token has no workflow
  grant, in the words GitHub uses for each.

The front passes the token's grant to the hook in the environment (``http-backend`` hands
its environment to ``git receive-pack``, and that to its hooks). Nothing else is served: no
web pages, no API.

    with GitServer(tmp_path, tokens=[Token("s3cret")]) as server:
        url = server.create("service", {"README.md": "hello\\n"})
"""

from __future__ import annotations

import base64
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

from devcluster import git_pre_receive
from devcluster.git_pre_receive import PROTECTED_ENV, WORKFLOW_GRANT_ENV

HTTP_BACKEND = "git-http-backend"


@dataclass(frozen=True)
class Token:
    """A credential the server accepts; ``workflow``: it may push workflow changes."""

    value: str
    workflow: bool = False


def _git(*arguments: str, cwd: Path | None = None) -> str:
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd or Path.cwd())},
    )
    return result.stdout


def _exec_path() -> Path:
    return Path(
        subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )


class GitServer:
    """Repositories under ``root`` served over HTTP on ``host``, on a port of the system's."""

    def __init__(
        self,
        root: Path,
        *,
        tokens: Iterable[Token],
        host: str = "127.0.0.1",
        protected: Iterable[str] = (),
        before: Callable[[str, str], None] | None = None,
    ) -> None:
        self.root = root / "repositories"
        self.root.mkdir(parents=True, exist_ok=True)
        self._tokens = {token.value: token for token in tokens}
        self._protected = " ".join(protected)
        self._backend = _exec_path() / HTTP_BACKEND
        self._server = http.server.ThreadingHTTPServer((host, 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.requests: list[tuple[str, str, int]] = []  # (method, path, status), in order
        # Called with each authenticated request's method and path before it is served, so a
        # test can act while a clone or a push is in flight.
        self._before = before

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}.git"

    def create(self, name: str, files: Mapping[str, str], *, branch: str = "main") -> str:
        """A bare repository ``name`` whose ``branch`` holds ``files`` in one commit; its URL."""
        bare = self.root / f"{name}.git"
        _git("init", "-q", "--bare", str(bare))
        seed = self.root.parent / f"{name}.seed"
        _git("init", "-q", "-b", branch, str(seed))
        for path, text in files.items():
            target = seed / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        _git("add", "-A", cwd=seed)
        _git(
            "-c",
            "user.name=seed",
            "-c",
            "user.email=seed@example.test",
            "commit",
            "-q",
            "-m",
            "The repository's first commit",
            cwd=seed,
        )
        _git("push", "-q", str(bare), f"{branch}:refs/heads/{branch}", cwd=seed)
        shutil.rmtree(seed)
        # After the seed: the hook judges what clients push, not the repository's start.
        hook = bare / "hooks" / "pre-receive"
        hook.write_text(f"#!{sys.executable}\n" + Path(git_pre_receive.__file__).read_text())
        hook.chmod(0o755)
        return self.url(name)

    def commits(self, name: str, ref: str) -> list[str]:
        """The subjects of the commits on ``ref`` in the served repository, newest first."""
        bare = self.root / f"{name}.git"
        return _git("--git-dir", str(bare), "log", "--format=%s", ref).splitlines()

    def changed_paths(self, name: str, ref: str) -> set[str]:
        """Every path any commit on ``ref`` changed."""
        bare = self.root / f"{name}.git"
        out = _git("--git-dir", str(bare), "log", "--format=", "--name-only", ref)
        return {line for line in out.splitlines() if line}

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                server._serve(self)

            def log_message(self, *_: object) -> None:
                pass

        return Handler

    def _token(self, request: http.server.BaseHTTPRequestHandler) -> Token | None:
        scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            _, _, password = base64.b64decode(encoded).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return self._tokens.get(password)

    def _serve(self, request: http.server.BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        token = self._token(request)
        if token is None:
            self.requests.append((request.command, url.path, 401))
            request.send_response(401)
            request.send_header("WWW-Authenticate", 'Basic realm="agentjobs test git"')
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else self._chunked(request)
        if self._before is not None:
            self._before(request.command, url.path)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
            "REQUEST_METHOD": request.command,
            "PATH_INFO": url.path,
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "token",
            "REMOTE_ADDR": request.client_address[0],
            WORKFLOW_GRANT_ENV: "1" if token.workflow else "0",
            PROTECTED_ENV: self._protected,
        }
        for header, variable in (
            ("Content-Encoding", "HTTP_CONTENT_ENCODING"),
            ("Git-Protocol", "GIT_PROTOCOL"),
        ):
            if request.headers.get(header):
                env[variable] = request.headers[header]
        result = subprocess.run(
            [str(self._backend)], input=body, capture_output=True, env=env, check=False
        )
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        status = 200
        headers: list[tuple[str, str]] = []
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.requests.append((request.command, url.path, status))
        request.send_response(status)
        for key, value in headers:
            request.send_header(key, value)
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)

    @staticmethod
    def _chunked(request: http.server.BaseHTTPRequestHandler) -> bytes:
        """A body sent chunked (git does for large pushes)."""
        if request.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return b""
        body = bytearray()
        while True:
            size = int(request.rfile.readline().split(b";")[0], 16)
            if size == 0:
                request.rfile.readline()
                return bytes(body)
            body += request.rfile.read(size)
            request.rfile.readline()

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
