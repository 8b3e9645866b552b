"""Texts bounded in bytes for a status, an Event or an error: cut whole characters, and name a
few of many things with a count of the rest."""

from __future__ import annotations

from collections.abc import Sequence

ENTRIES_NAMED = 3


def cut_utf8(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` bytes of UTF-8, cut between whole characters; a lone
    surrogate, which has no UTF-8 form, becomes ``?``."""
    encoded = text.encode("utf-8", errors="replace")
    return encoded[: max(limit, 0)].decode("utf-8", errors="ignore")


def named_and_counted(names: Sequence[str], *, shown: int = ENTRIES_NAMED) -> str:
    """The first ``shown`` of ``names`` and how many more: ``a, b, c and 12,342 more``."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown:,} more"
