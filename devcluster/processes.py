"""Detached processes with pid files, and the means to find and stop every one of them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Every process the cluster starts carries this variable, set to the state directory, so
# `down` can find strays (for example after a crash lost their pid files).
MARKER_VARIABLE = "AGENTJOBS_DEVCLUSTER"

_TCP_LISTEN = "0A"


@dataclass(frozen=True)
class Recorded:
    """What a pid file remembers: the pid and the kernel's start time, to survive pid reuse."""

    pid: int
    start_time: int


def _start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields resume after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def read_pid_file(pid_file: Path) -> Recorded | None:
    try:
        data = json.loads(pid_file.read_text())
        return Recorded(pid=int(data["pid"]), start_time=int(data["start_time"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def alive(pid_file: Path) -> int | None:
    """The pid recorded in `pid_file` if that very process still runs."""
    recorded = read_pid_file(pid_file)
    if recorded is None or _start_time(recorded.pid) != recorded.start_time:
        return None
    return recorded.pid


_STARTED: list[subprocess.Popen[bytes]] = []


def start(
    argv: Sequence[str],
    *,
    pid_file: Path,
    log_file: Path,
    env: Mapping[str, str],
    cwd: Path | None = None,
) -> int:
    """Start `argv` in its own session, so it outlives us and its group can be killed at once."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "ab") as log:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    # The process outlives this handle on purpose; keeping it stops Popen warning that it is
    # "still running" when the handle is collected.
    _STARTED.append(process)
    start_time = _start_time(process.pid)
    pid_file.write_text(json.dumps({"pid": process.pid, "start_time": start_time}))
    return process.pid


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def _wait_gone(pids: Iterable[int], timeout: float) -> set[int]:
    remaining = set(pids)
    deadline = time.monotonic() + timeout
    while remaining and time.monotonic() < deadline:
        remaining = {pid for pid in remaining if _start_time(pid) is not None}
        if remaining:
            time.sleep(0.1)
    return remaining


def stop(pid_file: Path, grace_seconds: float) -> None:
    """SIGTERM the recorded process group, SIGKILL it after the grace period; drop the pid file."""
    pid = alive(pid_file)
    if pid is not None:
        _signal_group(pid, signal.SIGTERM)
        if _wait_gone([pid], grace_seconds):
            _signal_group(pid, signal.SIGKILL)
            _wait_gone([pid], 5)
    pid_file.unlink(missing_ok=True)


def marked_processes(marker: str) -> list[int]:
    """Pids of the processes whose environment carries our marker set to `marker`."""
    own = os.getpid()
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process whose environment carries our marker; return the pids it found."""
    pids = marked_processes(marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _wait_gone(pids, 5)
    return pids


def listening_ports(ports: Iterable[int]) -> set[int]:
    """Which of `ports` have a TCP socket in LISTEN state on this machine."""
    wanted = set(ports)
    found: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as file:
            next(file)
            for line in file:
                columns = line.split()
                port = int(columns[1].rsplit(":", 1)[1], 16)
                if columns[3] == _TCP_LISTEN and port in wanted:
                    found.add(port)
    return found
