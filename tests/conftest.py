"""Shared test configuration: no test may leave an asyncio task running."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

pytest_plugins = [
    "tests.cluster_fixtures",
    "tests.integration.operator_fixtures",
]


@pytest.fixture(autouse=True)
def no_leftover_asyncio_tasks() -> Iterator[None]:
    yield
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    leftover = [task for task in asyncio.all_tasks(loop) if not task.done()]
    assert not leftover, f"asyncio tasks left running: {leftover}"
