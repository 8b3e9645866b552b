"""Which objects are a resource's own children: found by the owner's UID, never by name.

Names are deterministic so that a restart can never create a twin, and for the
same reason a name alone proves nothing: an Execution deleted and applied
again under its old name meets its predecessor's Phases, pods, ConfigMaps and
Secrets while the garbage collector (or a pod's grace period) removes them.
Such an object is waited on until it is gone, never adopted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def owned_by(obj: Mapping[str, Any], owner_uid: str) -> bool:
    """``obj`` names ``owner_uid`` as its controlling owner."""
    references = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(ref.get("uid") == owner_uid and ref.get("controller") for ref in references)


def describe_foreign(obj: Mapping[str, Any]) -> str:
    """Why ``obj`` is not ours, for a status message while waiting for it to go."""
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or "object"
    owners = ", ".join(
        f"{ref.get('kind')} {ref.get('name')} (uid {ref.get('uid')})"
        for ref in meta.get("ownerReferences") or []
    )
    leaving = " and is being deleted" if meta.get("deletionTimestamp") else ""
    return (
        f"{kind} {meta.get('name')!r} belongs to {owners or 'no owner'}{leaving}; "
        "waiting for it to go"
    )
