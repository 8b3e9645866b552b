"""R2, R5, R39: a closed block's body as one JSON object, or why it is not one.

Shared by every kind of block, so a report and a grade are held to the same
JSON: one value, an object, no ``NaN`` or ``Infinity``, no key written twice
at its top level.
"""

from __future__ import annotations

import json
from typing import Any


class NotOneObject(ValueError):
    """The body is not one JSON object; the message says why, for the block's author."""


class _DuplicateKeys:
    """Remembers whether the outermost JSON object repeated a key (R5).

    ``object_pairs_hook`` sees inner objects before outer ones, so the last
    object it sees is the top-level one.
    """

    def __init__(self) -> None:
        self.top_level_duplicates: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        self.top_level_duplicates = []
        for key, _ in pairs:
            if key in seen:
                self.top_level_duplicates.append(key)
            seen.add(key)
        return dict(pairs)


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def json_type(value: object) -> str:
    """``value``'s JSON type, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def load_object(body: str) -> dict[str, Any]:
    """The body's one JSON object; :class:`NotOneObject` says why it is not."""
    duplicates = _DuplicateKeys()
    try:
        value = json.loads(body, object_pairs_hook=duplicates, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise NotOneObject(f"the body is not one JSON value ({_short(error)})") from None
    if not isinstance(value, dict):
        raise NotOneObject(f"the body is {json_type(value)}, not a JSON object")
    if duplicates.top_level_duplicates:
        keys = ", ".join(sorted(set(duplicates.top_level_duplicates)))
        raise NotOneObject(f"key written twice at the top level: {keys}")
    return value


def _short(error: Exception) -> str:
    text = str(error) or type(error).__name__
    return text if len(text) <= 120 else text[:117] + "..."
