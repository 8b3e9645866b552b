"""The one interface every agent CLI's decoder implements (R13b-R13f).

A decoder turns one parsed JSON event into an :class:`EventMeaning`: the
agent's own words in it, whether it ends the run (and with what error), and
the usage it reports. Decoders may keep a little state between events (a
message counter, the last warning), never the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from agentjobs.contract.text import agent_text
from agentjobs.contract.text.usage import Spend

JsonObject = dict[str, object]


class AgentText(NamedTuple):
    """Words the agent wrote (R13c).

    Pieces with the same ``message`` key are one message (Claude Code
    blocks of one ``message.id``, Gemini CLI deltas); None is a whole
    message of its own. A ``delta`` piece is joined to the one before it
    as it is; any other piece is a block that ends its line.
    """

    text: str
    message: str | None = None
    delta: bool = False


@dataclass(frozen=True)
class CliError:
    """R13e: the CLI's own message that its run failed."""

    message: str
    max_turns: bool = False


@dataclass(frozen=True)
class Terminal:
    """R13d: the event that ends the run; ``text`` is the final text it carries, if any."""

    text: str | None = None
    error: CliError | None = None


class EventMeaning(NamedTuple):
    """What one event says. ``run_continues`` takes back an earlier terminal event
    (OpenCode: only the last ``step_finish`` counts). Tuples, as :class:`AgentText` is:
    one is made for nearly every event, at the reader's speed.

    Usage (R13f, R68): ``usage`` adds to the run's running sum; ``usage_total`` is the
    CLI's own total for the run so far and replaces that sum. ``model`` is the model the
    event's usage was spent on; ``turns`` counts the assistant turns it starts (R69).
    """

    texts: tuple[AgentText, ...] = ()
    terminal: Terminal | None = None
    usage: Spend | None = None
    usage_total: Spend | None = None
    model: str | None = None
    turns: int = 0
    run_continues: bool = False


NOTHING = EventMeaning()


class Decoder(Protocol):
    def decode(self, event: JsonObject) -> EventMeaning:
        """The meaning of one JSON object from the transcript."""


def text_of(value: object) -> str | None:
    return value if isinstance(value, str) else None


def object_of(value: object) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def type_of(event: JsonObject) -> str | None:
    """The event's ``type``; None when it is not a string (a list is not even hashable)."""
    return text_of(event.get("type"))


def count_of(value: object) -> int | None:
    """A token count: a non-negative JSON integer (a boolean is not one), within int64."""
    if type(value) is not int or value < 0:  # JSON gives exact ints; a bool is not one
        return None
    return value if value <= agent_text.MAX_COUNT else agent_text.MAX_COUNT


def cost_of(value: object) -> float | None:
    """A cost: a non-negative finite JSON number (``1e999`` parses as infinity)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return agent_text.cost(value)
    return None


def uncached(total_input: object, cached: object) -> int | None:
    """Input tokens not read from the cache, for CLIs whose input count includes them."""
    total, cached_count = count_of(total_input), count_of(cached)
    if total is None or cached_count is None:
        return total
    return max(total - cached_count, 0)


def usage_of(
    *,
    input_tokens: object = None,
    output_tokens: object = None,
    cache_creation: object = None,
    cache_read: object = None,
    cost: object = None,
) -> Spend | None:
    """A :class:`Spend` from raw JSON values; None when none of them is a valid count."""
    counts = (count_of(input_tokens), count_of(output_tokens), count_of(cache_creation))
    read, dollars = count_of(cache_read), cost_of(cost)
    if read is None and dollars is None and all(count is None for count in counts):
        return None
    return Spend(counts[0], counts[1], counts[2], read, dollars)
