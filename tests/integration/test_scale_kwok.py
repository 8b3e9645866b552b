"""Many phases at once on the simulated (kwok) nodes, measured by benchmarks/scale.py.

Cases:
- 130 one-phase Executions applied together, each agent running 30 s, all run at once:
  more than 100 phases have their agent running while the operator reads its log live,
  so log streams do not queue behind a pool of 100 connections (issue 13).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks import scale
from devcluster.testing import DevCluster

# Alone on the cluster (make test's second lane): its simulated nodes would take other tests' pods.
pytestmark = pytest.mark.exclusive

PHASES = 130
RUN_SECONDS = 30.0


async def _phases_at_once(log: Path) -> scale.Run:
    kube = await scale.connect()
    try:
        run, _usage = await scale.measure_phases(kube, PHASES, RUN_SECONDS, log)
    finally:
        await kube.close()
    return run


@pytest.mark.slow
def test_more_than_a_hundred_phases_run_at_once(
    local_cluster: DevCluster, crds: None, tmp_path: Path
) -> None:
    log = tmp_path / "operator.log"
    try:
        run = asyncio.run(_phases_at_once(log))
    finally:
        print(log.read_text(errors="replace")[-20000:])  # shown by pytest when it failed
    assert run.peak > 100, f"only {run.peak} of {PHASES} phases ran at once"
