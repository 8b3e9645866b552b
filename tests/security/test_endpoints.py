"""The operator's own listening endpoint, attacked from the host it runs on.

Cases: an operator whose credentials endpoint port another process already listens on
(another operator, which once shared it through SO_REUSEPORT and judged its pods' tokens)
refuses to start: it exits non-zero, saying which address and which flag, instead of
serving beside it.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.integration.operator_fixtures import CREDENTIALS_LISTEN, OperatorProcess

pytestmark = pytest.mark.integration


def test_an_operator_whose_credentials_port_is_taken_refuses_to_start(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> None:
    with socket.socket() as other:
        # As another operator's endpoint would hold it (SO_REUSEPORT set, the old way).
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        process = OperatorProcess(
            s3_env,
            namespace,
            tmp_path / "operator.log",
            [f"{CREDENTIALS_LISTEN}=127.0.0.1:{port}"],
        )
        process.start()
        try:
            code = process.wait(timeout=90)
        finally:
            process.stop()
            print(process.log()[-5000:])
    assert code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in process.log()
    assert "Traceback" not in process.log().split("agentjobs: error:")[-1]
