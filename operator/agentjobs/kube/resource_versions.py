"""Which of two copies of one object is the later: the watch's, or the one a write returned.

A write's answer can be newer than anything the watch has delivered yet, and a
reconcile that read the watch's older copy would judge its own write undone
(and post its condition's Event again). The API server's resourceVersions of
one object are etcd revisions, which only grow; one that is not an integer
cannot be ordered, and then the watch's copy is taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _revision(body: Mapping[str, Any]) -> int | None:
    version = (body.get("metadata") or {}).get("resourceVersion")
    return int(version) if isinstance(version, str) and version.isdigit() else None


def written_is_later(watched: Mapping[str, Any], written: Mapping[str, Any]) -> bool:
    """True when ``written`` is a later version of the same object than ``watched``."""
    same_object = (watched.get("metadata") or {}).get("uid") == (written.get("metadata") or {}).get(
        "uid"
    )
    seen, wrote = _revision(watched), _revision(written)
    return same_object and seen is not None and wrote is not None and wrote > seen
