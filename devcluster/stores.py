"""The S3 stores a cluster can run (versitygw, MinIO, or both on their own ports), and which
ones `up` was asked for."""

from __future__ import annotations

import json
from collections.abc import Iterable

from devcluster.components import MINIO, S3, Component
from devcluster.layout import MINIO_ENDPOINT, S3_ENDPOINT, Layout

# By the name `up --s3` takes, which is also the component's.
S3_STORES: dict[str, Component] = {S3.name: S3, MINIO.name: MINIO}
S3_ENDPOINTS = {S3.name: S3_ENDPOINT, MINIO.name: MINIO_ENDPOINT}
DEFAULT_S3_STORE = S3.name


def chosen_stores(layout: Layout) -> tuple[str, ...]:
    """The stores every `up` since the last `down` asked for, first asked first; else the
    default."""
    try:
        recorded = json.loads(layout.s3_stores_file.read_text())
    except FileNotFoundError:
        return (DEFAULT_S3_STORE,)
    return tuple(name for name in recorded if name in S3_STORES) or (DEFAULT_S3_STORE,)


def choose_stores(layout: Layout, stores: Iterable[str]) -> tuple[str, ...]:
    """Add `stores` to the chosen ones (a store already running is never stopped by `up`)."""
    unknown = sorted(set(stores) - set(S3_STORES))
    if unknown:
        raise ValueError(f"unknown S3 store(s) {unknown}; known: {sorted(S3_STORES)}")
    previous = chosen_stores(layout) if layout.s3_stores_file.exists() else ()
    chosen = tuple(dict.fromkeys((*previous, *stores)))
    layout.root.mkdir(parents=True, exist_ok=True)
    layout.s3_stores_file.write_text(json.dumps(list(chosen)))
    return chosen


def forget_stores(layout: Layout) -> None:
    """After `down`, the next `up` starts only the stores it is asked for."""
    layout.s3_stores_file.unlink(missing_ok=True)
