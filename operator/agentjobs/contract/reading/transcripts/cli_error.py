"""R13e: the CLI's own verdict on its run, in seed 000's vocabulary.

Not logged in, a bad or missing API key, or a 401/403 is ``auth``; a rate
or usage limit is ``rate_limit``; a model or option the API rejects is
``config``: all three are ``blocked`` (R36). Claude Code's
``error_max_turns`` is ``max_turns``; anything else ``agent_cli_error``.

Decisions where the contract is silent: the first match in that order wins
(an invalid key is often sent back as a 400, and is still ``auth``); every
kind but ``max_turns`` has the terminal reason ``agent_cli_error``; Gemini's
"Requested entity was not found" is its answer for an unknown model, so it
is ``config``, as is the Gemini API's own "models/<name> is not found".
"""

from __future__ import annotations

import re

from agentjobs.contract.reading.transcripts.meaning import CliError
from agentjobs.contract.text import agent_text
from agentjobs.models.contract import FailureKind, SystemFailure

AGENT_CLI_ERROR = "agent_cli_error"
MAX_TURNS = "max_turns"

_KINDS = (
    (
        FailureKind.AUTH,
        re.compile(
            r"not logged in|/login|api[ _-]?key|authenticat|unauthori[sz]ed|forbidden"
            r"|credential|\b40[13]\b",
            re.IGNORECASE,
        ),
    ),
    (
        FailureKind.RATE_LIMIT,
        re.compile(
            r"\b429\b|rate[ _-]?limit|usage limit|hit your limit|quota|too many requests"
            r"|resource[ _]exhausted",
            re.IGNORECASE,
        ),
    ),
    (
        FailureKind.CONFIG,
        re.compile(
            r"models?\b.{0,120}\bnot (?:found|supported|available|exist)|unknown model"
            r"|invalid model|requested entity was not found|invalid[ _]parameter"
            r"|invalid_request_error|unsupported (?:model|parameter|value)|\b400\b",
            re.IGNORECASE,
        ),
    ),
)


def truncated(message: str) -> str:
    """The message cut to 1 KiB of UTF-8, never through a character."""
    return agent_text.cut(message, agent_text.SHORT_TEXT_BYTES)


def classify(error: CliError) -> SystemFailure:
    """The system failure a CLI's own error stands for."""
    message = truncated(error.message)
    if error.max_turns:
        return SystemFailure(kind=FailureKind.MAX_TURNS, code=MAX_TURNS, message=message)
    for kind, pattern in _KINDS:
        if pattern.search(error.message):
            return SystemFailure(kind=kind, code=AGENT_CLI_ERROR, message=message)
    return SystemFailure(kind=FailureKind.AGENT_CLI_ERROR, code=AGENT_CLI_ERROR, message=message)
