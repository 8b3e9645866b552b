"""Why the demo's Execution did not finish in time, from what the cluster already says: the
Execution's and its Phases' statuses and conditions, and their pods' container states.

A container's message may be its log's last lines (a sidecar's ``FallbackToLogsOnError``):
controls are shown escaped, so they cannot move the terminal, and its lines indented."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
# kstatus's conditions restate the others: not shown.
_RESTATED = frozenset({"Reconciling", "Stalled", "Ready"})


def where_it_stands(execution: Obj, phases: list[Obj], pods: list[Obj]) -> list[str]:
    """Lines for a person: the Execution, each phase, each pod and its containers."""
    return [_shown(line) for line in _lines(execution, phases, pods)]


def _shown(line: str) -> str:
    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    safe = "".join(
        c if c.isprintable() or c == "\n" else c.encode("unicode_escape").decode() for c in line
    )
    return safe.rstrip("\n").replace("\n", "\n" + indent)


def _lines(execution: Obj, phases: list[Obj], pods: list[Obj]) -> list[str]:
    status = execution.get("status") or {}
    name = execution.get("metadata", {}).get("name", "?")
    lines = [f"execution {name}: {status.get('status') or 'pending'}"]
    lines += [f"  {line}" for line in _conditions(status)]
    for phase in sorted(phases, key=lambda p: p.get("spec", {}).get("index", 0)):
        phase_status = phase.get("status") or {}
        label = phase.get("spec", {}).get("name") or phase.get("metadata", {}).get("name")
        state = phase_status.get("status") or "pending"
        pod = phase_status.get("podName")
        lines.append(f"phase {label}: {state}" + (f" (pod {pod})" if pod else ""))
        lines += [f"  {line}" for line in _conditions(phase_status)]
        if phase_status.get("error"):
            lines.append(f"  error: {phase_status['error']}")
    for pod in sorted(pods, key=lambda p: str(p.get("metadata", {}).get("name"))):
        lines += _pod(pod)
    return lines


def _conditions(status: Obj) -> list[str]:
    """The conditions that hold, with what they say."""
    shown = []
    for condition in status.get("conditions") or []:
        if condition.get("status") != "True" or condition.get("type") in _RESTATED:
            continue
        message = condition.get("message") or condition.get("reason") or ""
        shown.append(f"{condition.get('type')}: {message}")
    return shown


def _pod(pod: Obj) -> list[str]:
    status = pod.get("status") or {}
    head = f"pod {pod.get('metadata', {}).get('name')}: {status.get('phase') or 'Pending'}"
    if status.get("reason"):
        head += f" ({status['reason']}: {status.get('message') or ''})"
    lines = [head]
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            lines.append(f"  not scheduled: {condition.get('message') or condition.get('reason')}")
    for kind in ("initContainerStatuses", "containerStatuses"):
        for container in status.get(kind) or []:
            lines.append(f"  {container.get('name')}: {_container(container)}")
    return lines


def _container(container: Obj) -> str:
    state = container.get("state") or {}
    if "running" in state:
        said = "running"
    elif "terminated" in state:
        said = "terminated " + _ended(state["terminated"])
    else:
        waiting = state.get("waiting") or {}
        said = f"waiting ({waiting.get('reason') or 'unknown'})"
        if waiting.get("message"):
            said += f": {waiting['message']}"
    restarts = int(container.get("restartCount") or 0)
    if restarts:
        said += f"; restarted {restarts} time{'s' if restarts != 1 else ''}"
    last = (container.get("lastState") or {}).get("terminated")
    if last:
        said += "; last ended " + _ended(last)
    return said


def _ended(terminated: Obj) -> str:
    said = f"with exit code {terminated.get('exitCode')} ({terminated.get('reason') or 'Error'})"
    message = str(terminated.get("message") or "").strip()
    return f"{said}: {message}" if message else said
