"""`agentjobs run --metrics-port` on a port another process holds.

Cases: the operator refuses to start, exiting 1 with one line naming the port and the
flag, not a traceback, before it reaches for the cluster (as it does for a taken
credentials endpoint port: test_credential_listen.py, tests/security/test_endpoints.py).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

AGENTJOBS = Path(sys.executable).parent / "agentjobs"


def test_an_operator_whose_metrics_port_is_taken_refuses_to_start_in_one_line() -> None:
    with socket.socket() as other:
        other.bind(("0.0.0.0", 0))
        other.listen()
        port = other.getsockname()[1]
        result = subprocess.run(
            [str(AGENTJOBS), "run", "--namespace", "nowhere", f"--metrics-port={port}"],
            env={"PATH": "/usr/bin:/bin", "KUBECONFIG": "/nonexistent"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1, result
    assert result.stderr.splitlines() == [
        f"agentjobs: error: the metrics endpoint cannot listen on port {port}: Address already "
        "in use; another process (another operator?) may hold it: give --metrics-port a free port"
    ], result.stderr
