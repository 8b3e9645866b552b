"""Fixtures of the chart tests: the pinned helm binary and a renderer of the chart."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.build import KUBERNETES_VERSION, ensure_binaries

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "agentjobs"

Render = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="session")
def helm() -> Path:
    """devcluster's pinned helm, built on first use like the cluster's other binaries."""
    return ensure_binaries(names=["helm"])["helm"]


def run_helm(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm), *args], capture_output=True, text=True, check=False, timeout=60
    )


def set_flags(values: dict[str, str]) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--set", f"{key}={value}")]


@pytest.fixture(scope="session")
def render(helm: Path) -> Render:
    """`helm template` of the chart with `--set` values, as a list of objects."""

    def rendered(values: dict[str, str] | None = None, *extra: str) -> list[dict[str, Any]]:
        args: Sequence[str] = [
            "template", "agentjobs", str(CHART), "--namespace", "agentjobs-system",
            "--kube-version", KUBERNETES_VERSION,
            *set_flags(values or {}), *extra,
        ]  # fmt: skip
        result = run_helm(helm, *args)
        assert result.returncode == 0, result.stderr
        return [doc for doc in yaml.safe_load_all(result.stdout) if doc]

    return rendered
