"""R55, R56: what an agent, its CLI or a grader wrote, made safe to store and to print.

Their words reach statuses, Events and terminals (``kubectl describe``,
``agentjobs report``). One module says once how such a value is made safe:

- :func:`clean`: a lone UTF-16 surrogate (JSON ``"\\ud83d"``, a CLI that cut
  an emoji in two) becomes U+FFFD, so the text always encodes as UTF-8; C0
  controls but line feed and tab, DEL, C1 controls and the bidirectional
  controls are removed (they move a terminal's cursor, retitle it, ring it,
  or show text in another order than it is stored).
- :func:`cut`: at most so many bytes of UTF-8, never through a character.
- :func:`named_and_counted`: a few of many names (files it wrote, say) and a count of
  the rest, so a message stays short however many there are.
- :func:`count` and :func:`cost`: a token count within int64 (the API server
  refuses a larger integer), a cost that is a finite number.
- :func:`cleaned`: every string of a contract model (a report, a grade, a
  CLI's error) cleaned; the readers return nothing else.

Decisions where the contract is silent: line feed and tab stay, in every
field, since comments, explanations and error texts are written on several
lines and neither moves a terminal's cursor back or recolours it (carriage
return does, so it goes). Of an escape sequence only its ESC goes: the
printable rest is inert text, and removing it would need the sequence's
grammar, which the reader applies to log lines only (R1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from agentjobs.models import unsafe_text

# The most of one text a status keeps, in bytes of UTF-8, before R57 squeezes any further: a
# short one (a blocker's type or message, a criterion, a warning, a failure's message) and a
# long one (a summary, the report's comments, an explanation, an error).
SHORT_TEXT_BYTES = 1024
LONG_TEXT_BYTES = 4096
# How many of a list's names a message gives before it counts the rest.
NAMES_SHOWN = 3
# int64's largest value: Kubernetes stores integers as int64 and refuses larger ones.
MAX_COUNT = 2**63 - 1
# No CLI's cost comes near; a bound keeps sums of costs finite.
MAX_COST = 1e15

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE = re.compile(f"[{unsafe_text.CONTROLS}{unsafe_text.BIDI}\ud800-\udfff]")

Model = TypeVar("Model", bound=BaseModel)


def _replace(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else ""


def clean(text: str) -> str:
    """``text`` with lone surrogates replaced and terminal controls removed."""
    if text.isprintable() or _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_replace, text)


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate as U+FFFD (strict encoding raises on one)."""
    return _encoded(text)[1]


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` bytes of UTF-8, never through a character, a lone
    surrogate as the U+FFFD it becomes."""
    whole, encoded = _encoded(text)
    if len(encoded) <= limit:
        return whole
    return encoded[:limit].decode("utf-8", errors="ignore")


def _encoded(text: str) -> tuple[str, bytes]:
    """``text`` with every lone surrogate replaced (itself when it has none), and its UTF-8."""
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError:
        whole = _SURROGATE.sub("\ufffd", text)
        return whole, whole.encode("utf-8")


def named_and_counted(names: Sequence[str], *, shown: int = NAMES_SHOWN) -> str:
    """The first ``shown`` of ``names`` and how many more: ``a, b, c and 12,342 more``."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown:,} more"


def count(value: int) -> int:
    """A token count within int64 (a sum of counts saturates there)."""
    return min(max(value, 0), MAX_COUNT)


def cost(value: float) -> float | None:
    """A cost within ``MAX_COST``; None for NaN or an infinity, which no CLI means."""
    if isinstance(value, int):  # a JSON integer may be too large for a float
        return float(min(max(value, 0), int(MAX_COST)))
    if not math.isfinite(value):
        return None
    return min(max(value, 0.0), MAX_COST)


def cleaned(model: Model) -> Model:
    """``model`` with every string in it cleaned (itself when none needed it)."""
    update = {}
    for name, value in model:
        new = _cleaned_value(value)
        if new is not value:
            update[name] = new
    return model.model_copy(update=update) if update else model


def _cleaned_value(value: Any) -> Any:
    """``value`` cleaned, or ``value`` itself when nothing in it changed."""
    if type(value) is str:  # an enum member is a str too: its value is ours
        new = clean(value)
        return value if new == value else new
    if isinstance(value, BaseModel):
        return cleaned(value)
    if isinstance(value, list):
        items = [_cleaned_value(item) for item in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    return value
