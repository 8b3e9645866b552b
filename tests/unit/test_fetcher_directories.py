"""The input fetcher's directories: created setgid and group-writable (2775), so that an
agent running as any uid, which shares the pod's fsGroup, can write its output there."""

from __future__ import annotations

import stat
from pathlib import Path

from agentjobs.sidecars import fetcher


def test_the_fetcher_leaves_output_and_input_setgid_and_group_writable(tmp_path: Path) -> None:
    output, inputs = tmp_path / "artifacts" / "output", tmp_path / "artifacts" / "input"
    fetcher.fetch(None, None, input_dir=inputs, output_dir=output)
    for directory in (output, inputs):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o2775
