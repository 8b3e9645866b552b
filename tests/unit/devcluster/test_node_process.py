"""Container processes: output capture, exit codes, start failures, leftovers killed."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from devcluster.node.logs import LogOptions, LogWriter, render, split_entries
from devcluster.node.process import LaunchSpec, StartFailure, spawn
from devcluster.node.records import ContainerRecord, PodRecord
from devcluster.node.state import PodState, load, save

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def _run(tmp_path: Path, argv: list[str]) -> tuple[int, bytes]:
    async def go() -> tuple[int, bytes]:
        writer = LogWriter(tmp_path / "0.log")
        try:
            process = await spawn(
                LaunchSpec(argv=argv, env=ENV, working_dir=str(tmp_path)),
                tmp_path / "spec.json",
                writer,
                None,
            )
            code = await process.wait()
        finally:
            writer.close()
        return code, writer.path.read_bytes()

    return asyncio.run(go())


def test_exit_code_and_both_streams_are_captured(tmp_path: Path) -> None:
    code, log = _run(tmp_path, ["sh", "-c", "printf 'out'; echo err >&2; pwd; exit 3"])
    assert code == 3
    entries, _ = split_entries(log)
    stdout = render([e for e in entries if e.stream == "stdout"], LogOptions())
    stderr = render([e for e in entries if e.stream == "stderr"], LogOptions())
    assert (stdout, stderr) == (b"out" + str(tmp_path).encode() + b"\n", b"err\n")


def test_signal_death_is_128_plus_signal(tmp_path: Path) -> None:
    code, _ = _run(tmp_path, ["sh", "-c", "kill -TERM $$"])
    assert code == 143


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_background_leftovers_die_with_the_main_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg.pid"
    code, _ = _run(tmp_path, ["sh", "-c", f"sleep 30 & echo $! > {pid_file}; exit 0"])
    assert code == 0
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 2
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(pid)


def test_missing_command_is_a_start_failure(tmp_path: Path) -> None:
    with pytest.raises(StartFailure, match='exec: "no-such-command-x": executable file not found'):
        _run(tmp_path, ["no-such-command-x"])
    with pytest.raises(StartFailure, match="stat /nonexistent/x: no such file"):
        _run(tmp_path, ["/nonexistent/x"])


def test_launcher_runs_with_this_interpreter(tmp_path: Path) -> None:
    code, log = _run(tmp_path, [sys.executable, "-c", "import sys; sys.stdout.write('ok')"])
    assert code == 0 and log.endswith(b"stdout P ok\n")


def test_pod_state_round_trips(tmp_path: Path) -> None:
    record = PodRecord(
        uid="u",
        start_time="2026-01-01T00:00:00Z",
        containers=[ContainerRecord(name="c", image="i", instances=2)],
    )
    record.containers[0].set_running("process://1", "2026-01-01T00:00:00Z")
    save(tmp_path / "state.json", PodState("ns", "p", record, {"c": [123, "456"]}))
    loaded = load(tmp_path / "state.json")
    assert loaded is not None
    assert loaded.record == record and loaded.processes == {"c": [123, "456"]}
    assert load(tmp_path / "missing.json") is None
