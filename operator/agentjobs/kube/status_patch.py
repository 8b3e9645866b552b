"""A status as the API's JSON, and the merge patch that turns the old status into the new."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def dump_status(status: BaseModel) -> dict[str, Any]:
    dumped: dict[str, Any] = status.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def status_patch(new: BaseModel, old: BaseModel) -> dict[str, Any] | None:
    """A JSON merge patch from ``old`` to ``new`` (removing fields ``new`` lacks); None when
    they are the same, so that a reconcile that changes nothing writes nothing."""
    after, before = dump_status(new), dump_status(old)
    return None if after == before else _merge_patch(after, before)


def _merge_patch(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """RFC 7386: objects merge key by key, so a key gone from a nested object is nulled
    there too; anything else (lists included) is replaced whole."""
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, dict) and isinstance(old, dict):
            patch[key] = _merge_patch(value, old)
        else:
            patch[key] = value
    return patch
