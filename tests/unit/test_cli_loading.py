"""`agentjobs <command>` loads only that command's module: the phase pods' sidecars start
with every agent and must not pay for the operator's client libraries.

Each case runs the command line in a fresh interpreter and lists what it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CLIENT_LIBRARIES = {"minio", "kopf", "aiohttp", "kubernetes_asyncio"}
# `agentjobs <command> --help`: the command's flags parsed, nothing run; on its exit the
# interpreter prints the top-level modules loaded by then.
PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules if "." not in m))))
from agentjobs import cli
cli.main([sys.argv[1], "--help"])
"""


def loaded(*argv: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr  # --help exits 0 once the flags are parsed
    modules: list[str] = json.loads(result.stdout.splitlines()[-1])
    return set(modules)


@pytest.mark.parametrize("command", ["harvest", "fetch-inputs", "timekeeper"])
def test_a_sidecar_command_loads_no_client_library(command: str) -> None:
    assert not loaded(command) & CLIENT_LIBRARIES


def test_a_command_that_reads_the_store_loads_minio() -> None:
    # The probe sees what a command loads: `artifacts` reads the store through minio.
    assert "minio" in loaded("artifacts")
