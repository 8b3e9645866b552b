"""The conftest's leak check: a test that leaves an asyncio task pending fails.

Cases: a task still sleeping when `asyncio.run` returns is reported (the fixture's list is
checked here, since the failure itself would come after the test); a task awaited to its
end is not.
"""

from __future__ import annotations

import asyncio


async def _leaves_a_task() -> None:
    asyncio.get_running_loop().create_task(asyncio.sleep(3600), name="left-behind")


async def _awaits_its_task() -> None:
    await asyncio.get_running_loop().create_task(asyncio.sleep(0), name="awaited")


def test_a_task_left_pending_is_reported(no_leftover_asyncio_tasks: list[str]) -> None:
    asyncio.run(_leaves_a_task())
    assert len(no_leftover_asyncio_tasks) == 1
    assert "left-behind" in no_leftover_asyncio_tasks[0]
    no_leftover_asyncio_tasks.clear()  # reported, as wanted: the test itself passes


def test_a_task_awaited_to_its_end_is_not(no_leftover_asyncio_tasks: list[str]) -> None:
    asyncio.run(_awaits_its_task())
    assert no_leftover_asyncio_tasks == []
