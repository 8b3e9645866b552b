"""Kubernetes resource quantities ("500m", "128Mi", "1e3") as exact decimals."""

from __future__ import annotations

import math
import re
from decimal import Decimal

_SUFFIXES: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|[a-zA-Z]*)$")


def parse_quantity(text: str | int | float) -> Decimal:
    """Parse a quantity string; raise ValueError when it is not one."""
    if isinstance(text, int | float):
        return Decimal(str(text))
    match = _QUANTITY.match(text.strip())
    if not match:
        raise ValueError(f"invalid quantity {text!r}")
    number, suffix = match.groups()
    if suffix[:1] in ("e", "E"):
        return Decimal(number + suffix)
    if suffix not in _SUFFIXES:
        raise ValueError(f"invalid quantity suffix in {text!r}")
    return Decimal(number) * _SUFFIXES[suffix]


def divide_rounding_up(value: Decimal, divisor: Decimal) -> int:
    """The integer the downward API reports: value / divisor rounded up."""
    if divisor <= 0:
        raise ValueError("divisor must be positive")
    return math.ceil(value / divisor)
