"""The types of `agentjobs run`'s options: each turns a flag's text into its value, or into
a clear flag error."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from agentjobs.contract.limits import prices
from agentjobs.contract.notifications import targets
from agentjobs.models.limits import PriceTable

Context = TypeVar("Context", bound=BaseModel)


def json_model(model: type[Context]) -> Callable[[str], Context]:
    """A flag whose value is ``model`` as JSON."""

    def parse(text: str) -> Context:
        try:
            return model.model_validate_json(text)
        except ValidationError as error:
            raise argparse.ArgumentTypeError(
                f"not a {model.__name__}: {error.errors()[0]['msg']}"
            ) from error

    return parse


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def moment(text: str) -> datetime:
    """An RFC 3339 time with its offset, e.g. 2026-12-05T09:00:00Z."""
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time: {text!r}") from None
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give the time's offset, e.g. Z: {text!r}")
    return parsed


def webhook_pattern(text: str) -> str:
    try:
        targets.parse_pattern(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def listen_address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text!r}")
    return host.strip("[]"), int(port)


def price_table(path: str) -> PriceTable:
    """The price table in ``path``; a file that cannot be used is a flag error (R68)."""
    try:
        return prices.parse(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{path}: {error.strerror or error}") from error
    except prices.PriceTableError as error:
        raise argparse.ArgumentTypeError(f"{path}: {error}") from error
