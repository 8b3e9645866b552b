"""Executions placed on the real node (devcluster.kubelet): a kubelet with containerd and runc,
running the images built from our Dockerfiles (devcluster.images).

The operator runs on the host here, as in `make demo`; its credentials endpoint listens on the
node link's host address, since a pod's loopback is its own.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devcluster.images.catalog import EXAMPLE_AGENT_IMAGE
from devcluster.kubelet.kubelet_config import NODE_SELECTOR, TOLERATION
from devcluster.layout import HOST_ADDRESS
from tests.integration.operator_fixtures import (
    CREDENTIALS_LISTEN,
    OperatorProcess,
    free_port,
    running,
)

AGENT_IMAGE = EXAMPLE_AGENT_IMAGE
# The example agent image's USER (manifests/examples/agent/Dockerfile).
AGENT_UID = 65532


def placed(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` (an Execution) with its phases on the real node."""
    placed_manifest = copy.deepcopy(manifest)
    defaults = placed_manifest["spec"].setdefault("defaults", {})
    defaults["nodeSelector"] = dict(NODE_SELECTOR)
    defaults["tolerations"] = [dict(TOLERATION)]
    return placed_manifest


@pytest.fixture
def real_operator(
    s3_env: dict[str, str], crds: None, namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    """The operator for the test's namespace with its default, restricted pod security."""
    listen = f"{CREDENTIALS_LISTEN}={HOST_ADDRESS}:{free_port()}"
    process = OperatorProcess(s3_env, namespace, tmp_path / "operator.log", extra=[listen])
    yield from running(process)
