"""Run the chart's Argo CD health check (charts/agentjobs/argocd/health.lua) as Argo CD does.

Argo CD runs it with gopher-lua, a Lua 5.1, with the object in the global `obj`; lupa's
Lua 5.1 runtime does the same here. The object goes in as Lua tables, lists 1-based.
"""

from __future__ import annotations

from typing import Any

import lupa.lua51 as lupa

from tests.chart.conftest import CHART

HEALTH_CHECK = CHART / "argocd" / "health.lua"
HEALTH_STATUSES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}


def assess(obj: dict[str, Any]) -> tuple[str, str]:
    """Argo CD's health of `obj`: its hs.status and hs.message."""
    runtime = lupa.LuaRuntime()
    runtime.globals().obj = runtime.table_from(obj, recursive=True)
    health = runtime.execute(HEALTH_CHECK.read_text())
    status, message = health["status"], health["message"]
    assert status in HEALTH_STATUSES, status
    assert isinstance(message, str), message
    return status, message
