"""R68, R69: what a run has spent so far, event by event, as its CLI reports it.

Tokens add up as each event reports them, or are replaced by a total the CLI prints for
the run (Claude Code's ``result``). The cost is the CLI's own where it reports one;
otherwise it is computed from the price table for the model the event names (or the
last one named). A single event on a model without a price makes the cost unknown
(None) until a reported total replaces it: a partial sum would be a made-up cost.
"""

from __future__ import annotations

from decimal import Decimal

from agentjobs.contract.limits import guard, prices
from agentjobs.contract.text import agent_text
from agentjobs.contract.text import usage as usage_sums
from agentjobs.contract.text.usage import COUNTS, Spend
from agentjobs.models.contract import Usage
from agentjobs.models.limits import PriceTable

NO_MODEL = ""
EMPTY = Spend()
# The models without a price a warning names, and how much of each name.
UNPRICED_NAMED = 8
MODEL_NAME_BYTES = 200


class UsageMeter:
    """The running usage of one log; ``prices`` None when the operator has no table.

    Counts are kept as plain numbers (None: not reported), not models: this runs for every
    event that spends, at the reader's speed; a :class:`Usage` is built only when asked."""

    def __init__(self, price_table: PriceTable | None = None) -> None:
        self._prices = price_table
        self._model: str | None = None
        self._counts: list[int | None] = [None] * len(COUNTS)
        self._reported = Decimal(0)
        self._computed = Decimal(0)
        self._costed = False  # some cost was reported or computed
        self.unpriced: set[str] = set()
        self._last_unpriced: str | None = None  # the last model added to ``unpriced``
        self.turns = 0

    def observe(
        self,
        *,
        usage: Spend | None = None,
        usage_total: Spend | None = None,
        model: str | None = None,
        turns: int = 0,
    ) -> None:
        if model:
            self._model = model
        self.turns += turns
        if usage_total is not None:
            self._replace(usage_total)
        if usage is not None:
            self._add(usage)

    def _replace(self, total: Spend) -> None:
        """A total the CLI printed: its counts replace the running ones it reports, its cost
        (or, without one, its counts priced) replaces the running cost."""
        if total == EMPTY:
            return
        merged = [
            new if new is not None else old
            for new, old in zip(total.counts(), self._counts, strict=True)
        ]
        self._counts = [None] * len(COUNTS)
        self._reported, self._computed, self._costed = Decimal(0), Decimal(0), False
        self.unpriced, self._last_unpriced = set(), None
        self._add(Spend._make([*merged, total.cost_usd]))

    def _add(self, more: Spend) -> None:
        spent = False
        for index, count in enumerate(more.counts()):
            if count is not None:
                known = self._counts[index]
                self._counts[index] = count if known is None else agent_text.count(known + count)
                spent = True
        if more.cost_usd is not None:
            self._reported += Decimal(repr(more.cost_usd))
            self._costed = True
            return
        if not spent:
            return
        price = self._prices.models.get(self._model) if self._prices and self._model else None
        if price is None:
            self._unpriced(self._model or NO_MODEL)
            return
        self._computed += prices.cost(more, price)
        self._costed = True

    def _unpriced(self, model: str) -> None:
        if model != self._last_unpriced and len(self.unpriced) < UNPRICED_NAMED:
            # A hostile log may name any number of models, of any length.
            self.unpriced.add(agent_text.cut(model, MODEL_NAME_BYTES))
            self._last_unpriced = model

    @property
    def tokens(self) -> int | None:
        """R67's count so far: input with cache writes, and output; cache reads not counted."""
        input_tokens, output, cache_writes, _ = self._counts
        return guard.counted(input_tokens, cache_writes, output)

    @property
    def model(self) -> str | None:
        """The model the transcript named last."""
        return self._model

    @property
    def cost(self) -> Decimal | None:
        """The run's cost so far; None when not known."""
        if self.unpriced or not self._costed:  # one unpriced event makes it unknown
            return None
        return self._reported + self._computed

    @property
    def usage(self) -> Usage | None:
        """The run's usage so far, its cost included where it is known (R13f)."""
        cost = self.cost
        fields: dict[str, float | None] = {
            **dict(zip(COUNTS, self._counts, strict=True)),
            "cost_usd": None if cost is None else usage_sums.dollars(cost),
            "turns": self.turns or None,
        }
        if all(value is None for value in fields.values()):
            return None
        return Usage.model_validate(fields)

    def warnings(self) -> list[str]:
        """Why the cost is not known, when a price table was given to know it."""
        if self._prices is None or self.cost is not None or not self.unpriced:
            return []
        named = sorted(m for m in self.unpriced if m != NO_MODEL)
        if NO_MODEL in self.unpriced and not named:
            return ["the transcript names no model, so its cost is not known"]
        return [
            f"no price for model {m} in the price table, so the cost is not known" for m in named
        ]
