"""devcluster's simulated (kwok) nodes: what kwok is configured with, and when the nodes'
log front ends a followed log.

Cases:
- the Node's taint is tolerated by TOLERATION and its labels match NODE_SELECTOR;
- the nodes advertise the front's port and loopback, which the API server dials for logs;
- the stage that ends a container waits for the duration in the pod's variable;
- the agent log kwok serves is in the runtime's format and holds a TASK_RESULT block;
- a followed log ends once the watch says its container terminated, not before;
- a deleted pod ends every container's followed log.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from devcluster import kwok
from devcluster.kwok_logs import Terminations
from devcluster.layout import KWOK_NODE_PORT, Layout


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path / "cluster")


def _documents(layout: Layout, kind: str) -> list[Any]:
    return [doc for doc in kwok.configuration(layout) if doc["kind"] == kind]


def test_only_pods_that_tolerate_and_select_the_simulated_node_land_there() -> None:
    node = kwok.node_manifest("kwok-0")
    (taint,) = node["spec"]["taints"]

    assert taint["key"] == kwok.TOLERATION["key"]
    assert taint["effect"] == kwok.TOLERATION["effect"]
    assert kwok.TOLERATION["operator"] == "Exists"
    assert kwok.NODE_SELECTOR.items() <= node["metadata"]["labels"].items()


def test_the_nodes_point_the_api_server_at_the_log_front(layout: Layout) -> None:
    (options,) = (doc["options"] for doc in _documents(layout, "KwokConfiguration"))

    assert options["nodePort"] == KWOK_NODE_PORT
    assert options["nodeIP"] == "127.0.0.1"
    assert kwok.KWOK_LOGS.ports == (KWOK_NODE_PORT,)


def test_a_container_exits_after_the_duration_its_pod_asks_for(layout: Layout) -> None:
    (exited,) = (s for s in _documents(layout, "Stage") if s["metadata"]["name"] == "pod-exited")

    assert kwok.RUN_DURATION_VARIABLE in exited["spec"]["delay"]["durationFrom"]["expressionFrom"]
    assert "exitCode: 0" in exited["spec"]["next"]["statusTemplate"]


def test_the_served_log_is_a_runtime_log_with_a_report(layout: Layout) -> None:
    kwok._write_configuration(layout)
    lines = kwok.agent_log_path(layout).read_text().splitlines()

    assert all(line.split(" ", 3)[1:3] == ["stdout", "F"] for line in lines)
    messages = [line.split(" ", 3)[3] for line in lines]
    assert messages[-1] == "TASK_RESULT_END"
    assert messages[-2].startswith('TASK_RESULT: {"success": true')


def _pod(name: str, terminated: list[str], running: list[str]) -> dict[str, Any]:
    statuses = [{"name": c, "state": {"terminated": {"exitCode": 0}}} for c in terminated]
    statuses += [{"name": c, "state": {"running": {}}} for c in running]
    return {
        "metadata": {"namespace": "ns", "name": name},
        "status": {"containerStatuses": statuses},
    }


def test_a_followed_log_ends_when_its_container_terminates() -> None:
    async def scenario() -> tuple[bool, bool]:
        terminations = Terminations()
        await terminations.record("ADDED", _pod("p", [], ["agent"]))
        waiter = asyncio.create_task(terminations.wait_ended(("ns", "p"), "agent"))
        await asyncio.sleep(0.05)
        still_open = not waiter.done()
        await terminations.record("MODIFIED", _pod("p", ["agent"], []))
        await asyncio.wait_for(waiter, 1)
        return still_open, waiter.done()

    still_open, ended = asyncio.run(scenario())

    assert still_open
    assert ended


def test_a_deleted_pod_ends_every_followed_log() -> None:
    async def scenario() -> bool:
        terminations = Terminations()
        await terminations.record("ADDED", _pod("p", [], ["agent", "other"]))
        await terminations.record("DELETED", _pod("p", [], ["agent", "other"]))
        await asyncio.wait_for(terminations.wait_ended(("ns", "p"), "other"), 1)
        return terminations.ended(("ns", "p"), "agent")

    assert asyncio.run(scenario())
