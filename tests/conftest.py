"""Shared test configuration: no test may leave an asyncio task running."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest

pytest_plugins = [
    "tests.cluster_fixtures",
    "tests.integration.operator_fixtures",
    "tests.integration.tenant_fixtures",
    "tests.integration.browser",
]


@pytest.fixture(autouse=True)
def no_leftover_asyncio_tasks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Fails a test whose `asyncio.run` returns with tasks of its own still pending.

    `asyncio.run` cancels such tasks quietly as it closes its loop, so they are looked for
    just before it does: the test's coroutine is run inside one that lists them when it ends.
    """
    leaked: list[str] = []
    run = asyncio.run

    async def watched(main: Coroutine[Any, Any, Any]) -> Any:
        try:
            return await main
        finally:
            this = asyncio.current_task()
            leaked.extend(repr(t) for t in asyncio.all_tasks() if t is not this and not t.done())

    def checked_run(main: Coroutine[Any, Any, Any], **options: Any) -> Any:
        return run(watched(main), **options)

    monkeypatch.setattr(asyncio, "run", checked_run)
    yield leaked
    assert not leaked, f"asyncio tasks left running: {leaked}"
