"""`make demo`, the README's first command, ends with the example completed and its artifacts.

It runs `python -m devcluster.demo` as the Makefile does, on the session's cluster, its phases
in the example agent's image on the real node. Cases: the demo exits 0 and
prints the Execution `completed`, each phase's agent output and verdict, and one artifact per
phase from `agentjobs artifacts`.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from devcluster.testing import DevCluster
from tests.integration.operator_fixtures import REPO

# Alone on the cluster (make test's second lane): the demo runs as a newcomer's would.
pytestmark = pytest.mark.exclusive


@pytest.mark.slow
def test_the_demo_completes_the_multi_phase_example_and_lists_its_artifacts(
    local_cluster: DevCluster,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "devcluster.demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = result.stdout
    assert result.returncode == 0, output + result.stderr
    assert "status:       completed" in output
    for phase in ("investigate", "fix", "review"):
        assert f'phase {phase}: completed (the agent says: "{phase}.md written")' in output
        assert f"    | [{phase}] task: " in output
        row = rf"^{phase}\s+\d+\s+[0-9a-f]{{12}}\s+{phase}\.md\s+s3://agentjobs/\S+/{phase}\.md$"
        assert re.search(row, output, flags=re.MULTILINE), f"no artifact row for {phase}"
    assert "take it down:" in output
