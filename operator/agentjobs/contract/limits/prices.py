"""R68: a run's cost from its tokens, by the price table, for CLIs that report no cost.

A model the table does not name has no cost: a cost is never guessed.
"""

from __future__ import annotations

from decimal import Decimal

import yaml
from pydantic import ValidationError

from agentjobs.contract.text.usage import Spend
from agentjobs.models.limits import ModelPrice, PriceTable

MILLION = Decimal(1_000_000)


class PriceTableError(ValueError):
    """A price table that cannot be read, in words that say where."""


def parse(text: str) -> PriceTable:
    """The price table in a ConfigMap's YAML (``models: {name: {input, output, ...}}``)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise PriceTableError(f"the price table is not YAML: {error}") from error
    try:
        return PriceTable.model_validate(data or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise PriceTableError(f"the price table is not valid: {where}: {first['msg']}") from None


def cost(usage: Spend, price: ModelPrice) -> Decimal:
    """What ``usage`` costs at ``price``; cache reads and writes at their own prices (or the
    input price where the table gives none)."""
    per_million = (
        (usage.input_tokens, price.input),
        (usage.output_tokens, price.output),
        (usage.cache_read_input_tokens, price.cache_read or price.input),
        (usage.cache_creation_input_tokens, price.cache_write or price.input),
    )
    total = sum((Decimal(count or 0) * Decimal(rate) for count, rate in per_million), Decimal(0))
    return total / MILLION
