"""Container processes on the event loop: spawn, stream output, wait, signal.

No threads: exits are noticed through a pidfd and output through non-blocking
pipes, all registered with the asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .logs import LogWriter

LAUNCHER = Path(__file__).with_name("launch.py")
CGROUP_ROOT = Path("/sys/fs/cgroup/memory")


class StartFailure(Exception):
    """The command could not be started: the container ends StartError, exit 128."""


@dataclass
class Mount:
    source: str
    target: str
    read_only: bool = False
    is_file: bool = False


@dataclass
class LaunchSpec:
    argv: list[str]
    env: dict[str, str]
    working_dir: str
    mounts: list[Mount] = field(default_factory=list)
    uid: int | None = None
    gid: int | None = None
    groups: list[int] = field(default_factory=list)
    cgroup_procs: str | None = None
    hostname: str | None = None
    # Host paths a non-root container must be able to reach (see launch.py).
    exposed: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(
            {
                "argv": self.argv,
                "env": self.env,
                "workingDir": self.working_dir,
                "mounts": [
                    {
                        "source": m.source,
                        "target": m.target,
                        "readOnly": m.read_only,
                        "file": m.is_file,
                    }
                    for m in self.mounts
                ],
                "uid": self.uid,
                "gid": self.gid,
                "groups": self.groups,
                "cgroupProcs": self.cgroup_procs,
                "hostname": self.hostname,
                "exposed": self.exposed,
            }
        )


def node_cgroup_base(node_name: str) -> Path | None:
    """A writable memory cgroup for this node's containers, under the node's own."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "memory" in controllers.split(","):
                base = CGROUP_ROOT / path.lstrip("/") / f"agentjobs-{node_name}"
                base.mkdir(exist_ok=True)
                probe = base / "probe"
                probe.mkdir(exist_ok=True)
                (probe / "memory.limit_in_bytes").write_text(str(1 << 30))
                probe.rmdir()
                return base
    except OSError:
        return None
    return None


class MemoryCgroup:
    """One container's memory cgroup (v1): limit, OOM-kill count, cleanup."""

    def __init__(self, path: Path, limit_bytes: int) -> None:
        path.mkdir(exist_ok=True)
        (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
        with contextlib.suppress(OSError):  # no swap accounting on some kernels
            (path / "memory.memsw.limit_in_bytes").write_text(str(limit_bytes))
        self.path = path

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def oom_killed(self) -> bool:
        with contextlib.suppress(OSError):
            for line in (self.path / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value) > 0
        return False

    def kill_all(self) -> None:
        with contextlib.suppress(OSError):
            for pid in (self.path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.rmdir()


async def _read_until_eof(fd: int) -> bytes:
    """Read a non-blocking fd to EOF on the loop, then close it."""
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            chunks.append(data)
        elif not done.done():
            done.set_result(None)

    os.set_blocking(fd, False)
    loop.add_reader(fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    return b"".join(chunks)


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of a pid, to tell a live process from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class ContainerProcess:
    """A started container: its output goes to `log`; `exited` resolves to the code."""

    def __init__(
        self, pid: int, out_fd: int, err_fd: int, log: LogWriter, cgroup: MemoryCgroup | None
    ) -> None:
        self.pid = pid
        self.start_time = process_start_time(pid)
        self.log = log
        self.cgroup = cgroup
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[int] = loop.create_future()
        self._open_streams: set[int] = set()
        self._err_fd = err_fd
        self._streams_done: asyncio.Future[None] = loop.create_future()
        for fd, name in ((out_fd, "stdout"), (err_fd, "stderr")):
            os.set_blocking(fd, False)
            self._open_streams.add(fd)
            loop.add_reader(fd, self._on_output, fd, name)
        self._pidfd = os.pidfd_open(pid)
        loop.add_reader(self._pidfd, self._on_exit)

    def _on_output(self, fd: int, stream: str) -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.log.write(stream, data)
        else:
            self._close_stream(fd)

    def _close_stream(self, fd: int) -> None:
        if fd in self._open_streams:
            asyncio.get_running_loop().remove_reader(fd)
            os.close(fd)
            self._open_streams.discard(fd)
        if not self._open_streams and not self._streams_done.done():
            self._streams_done.set_result(None)

    def _on_exit(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 255 << 8
        if pid == 0:
            return
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        code = os.waitstatus_to_exitcode(status)
        if not self.exited.done():
            self.exited.set_result(128 - code if code < 0 else code)

    def signal(self, signum: int) -> None:
        if not self.exited.done():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill_group(self) -> None:
        """What a container's end does to everything left in it."""
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all()

    async def wait(self) -> int:
        """Wait for exit, kill leftovers, drain the output; return the exit code."""
        code = await asyncio.shield(self.exited)
        self.kill_group()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._streams_done), 2.0)
        for fd in list(self._open_streams):
            self._drain(fd)  # what is already in the pipe is the container's, not lost
            self._close_stream(fd)
        return code

    def _drain(self, fd: int) -> None:
        name = "stderr" if fd == self._err_fd else "stdout"
        while True:
            try:
                data = os.read(fd, 65536)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.log.write(name, data)


async def spawn(
    spec: LaunchSpec,
    spec_path: Path,
    log: LogWriter,
    cgroup: MemoryCgroup | None,
    on_spawned: Callable[[int], None] | None = None,
) -> ContainerProcess:
    """Start the launcher for a container; raise StartFailure if exec fails."""
    spec_path.parent.mkdir(parents=True, exist_ok=True)
    spec_path.write_text(spec.to_json())
    status_read, status_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    os.set_inheritable(status_write, True)
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-I", "-S", str(LAUNCHER), str(spec_path), str(status_write)],
            {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_write, 1),
                (os.POSIX_SPAWN_DUP2, err_write, 2),
            ],
            setsid=True,
        )
    except OSError as error:
        for fd in (status_read, out_read, err_read):
            os.close(fd)
        raise StartFailure(f"failed to start container process: {error}") from error
    finally:
        for fd in (status_write, out_write, err_write):
            os.close(fd)
    if on_spawned is not None:
        on_spawned(pid)
    process = ContainerProcess(pid, out_read, err_read, log, cgroup)
    failure = await _read_until_eof(status_read)
    if failure:
        await process.wait()
        raise StartFailure(failure.decode(errors="replace"))
    return process
