"""What a run may spend (R67, R71): the limits a phase, the defaults or an Execution set, the
price table costs are computed from, and how much of each limit a run has used.

Money is a decimal string, as Kubernetes quantities are, so a limit reads back exactly as
it was written; it is compared as a :class:`~decimal.Decimal`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agentjobs.models.contract import ContractModel
from agentjobs.models.kubernetes import KubernetesModel

MAX_TURNS = 100_000
MAX_TOKENS = 10**15
MAX_IDLE_SECONDS = 7 * 24 * 3600
DECIMAL = r"^[0-9]{1,9}(\.[0-9]{1,9})?$"

Dollars = Annotated[str, Field(pattern=DECIMAL, max_length=19)]


class ExecutionLimits(KubernetesModel):
    """R71: what all of an Execution's pods may spend together (its phases, attempts,
    revisions and graders)."""

    max_cost_usd: Dollars | None = None
    # Input (cache writes included) and output tokens; tokens read from a cache are not.
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    max_turns: int | None = Field(default=None, ge=1, le=MAX_TURNS)


class BudgetUsed(KubernetesModel):
    """R71: what an Execution's earlier phases had used of its limits (None: not known)."""

    cost_usd: Dollars | None = None
    tokens: int | None = Field(default=None, ge=0)
    turns: int | None = Field(default=None, ge=0)


class ExecutionBudget(KubernetesModel):
    """R71: the Execution's limits, and what its earlier phases had used of them, as the
    operator hands them to the phase it creates."""

    limits: ExecutionLimits
    used_before: BudgetUsed = BudgetUsed()


class Limits(ExecutionLimits):
    """R67: what one attempt of a phase may spend, and how long its agent may be silent."""

    idle_seconds: int | None = Field(default=None, ge=1, le=MAX_IDLE_SECONDS)


class ModelPrice(ContractModel):
    """Dollars per million tokens of one model (R68)."""

    input: Dollars
    output: Dollars
    cache_read: Dollars | None = None
    cache_write: Dollars | None = None


class PriceTable(ContractModel):
    """R68: the operator's ``--price-table``, by the model names the CLIs print."""

    models: dict[str, ModelPrice] = {}


class LimitUse(ContractModel):
    """One limit and how much of it was used, as the status shows them."""

    limit: str
    allowed: str
    used: str | None = None  # None: not known (no cost for an unpriced model)
