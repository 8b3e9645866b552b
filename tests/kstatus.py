"""kstatus's own verdict on objects: sigs.k8s.io/cli-utils' status.Compute, built by devcluster.

Flux, kpt and cli-utils' appliers wait on this verdict (InProgress, Current, Failed, ...).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from devcluster.build import ensure_binaries


def compute(objects: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(status, message) of each object, by kstatus's rules."""
    binary = ensure_binaries(names=["kstatus"])["kstatus"]
    result = subprocess.run(
        [str(binary)], input=json.dumps(list(objects)), capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return [(verdict["status"], verdict["message"]) for verdict in json.loads(result.stdout)]
