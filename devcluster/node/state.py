"""Per-pod state on disk, so a restarted node knows what it had been running."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from .records import ContainerRecord, PodRecord


@dataclasses.dataclass
class PodState:
    """The pod record plus the live processes' pids (pid, kernel start time)."""

    namespace: str
    name: str
    record: PodRecord
    processes: dict[str, list[Any]] = dataclasses.field(default_factory=dict)


def save(path: Path, state: PodState) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(dataclasses.asdict(state)))
    os.replace(temporary, path)


def _container(data: dict[str, Any]) -> ContainerRecord:
    fields = {f.name for f in dataclasses.fields(ContainerRecord)}
    return ContainerRecord(**{k: v for k, v in data.items() if k in fields})


def load(path: Path) -> PodState | None:
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        data = json.loads(path.read_text())
        record_data = data["record"]
        fields = {f.name for f in dataclasses.fields(PodRecord)}
        record = PodRecord(
            **{
                k: v
                for k, v in record_data.items()
                if k in fields and k not in ("init_containers", "containers")
            }
        )
        record.init_containers = [_container(c) for c in record_data["init_containers"]]
        record.containers = [_container(c) for c in record_data["containers"]]
        return PodState(data["namespace"], data["name"], record, data.get("processes") or {})
    return None
