"""R13e: an agent CLI's own error, classified in seed 000's vocabulary.

Cases: auth (not logged in, bad or missing API key, 401/403), rate limits
(429, rate limit, usage limit, hit your limit, quota), config (a model or
option the API rejects, 400), max turns, anything else; auth wins over a
400; the message is cut to 1 KiB without splitting a character; the
outcome each gives (R36: blocked or failed, needs the user's action).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentjobs.contract.outcome import outcome
from agentjobs.contract.reading.transcripts import cli_error
from agentjobs.contract.reading.transcripts.meaning import CliError
from agentjobs.models.contract import FailureKind, TaskOutcomeStatus


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Not logged in. Run the login command first", FailureKind.AUTH),
        ("API key rejected (expired or revoked)", FailureKind.AUTH),
        ("Missing environment variable: `ANTHROPIC_API_KEY`", FailureKind.AUTH),
        ("unexpected status 401 Unauthorized: no bearer token", FailureKind.AUTH),
        ("HTTP 403 from the model endpoint", FailureKind.AUTH),
        ("status 400: API key not valid for this project", FailureKind.AUTH),
        ("HTTP 429 Too Many Requests", FailureKind.RATE_LIMIT),
        ("Rate limit exceeded for the organisation", FailureKind.RATE_LIMIT),
        ("Usage limit reached for this plan", FailureKind.RATE_LIMIT),
        ("You've hit your limit for today", FailureKind.RATE_LIMIT),
        ("Quota exceeded for requests per minute", FailureKind.RATE_LIMIT),
        ("The model 'gpt-9' is not supported on this account", FailureKind.CONFIG),
        ("Model not found: acme/large", FailureKind.CONFIG),
        ('{"status":400,"error":{"type":"invalid_request_error"}}', FailureKind.CONFIG),
        ("[API Error: Requested entity was not found.]", FailureKind.CONFIG),
        # Gemini CLI 0.61 passing on the Gemini API's 404 for an unknown model.
        ("[API Error: models/gemini-9 is not found for API version v1beta]", FailureKind.CONFIG),
        ("Invalid stream: the model sent an empty response", FailureKind.AGENT_CLI_ERROR),
        ("segmentation fault in the sandbox helper", FailureKind.AGENT_CLI_ERROR),
        ("the 4001st request failed", FailureKind.AGENT_CLI_ERROR),
    ],
)
def test_r13e_each_message_has_its_kind(message: str, kind: FailureKind) -> None:
    failure = cli_error.classify(CliError(message))
    assert failure.kind is kind
    assert failure.code == "agent_cli_error"
    assert failure.message == message


def test_r13e_max_turns_is_its_own_kind_and_terminal_reason() -> None:
    failure = cli_error.classify(CliError("stopped after 5 turns: 429 later", max_turns=True))
    assert (failure.kind, failure.code) == (FailureKind.MAX_TURNS, "max_turns")


def test_r13e_the_message_is_cut_to_one_kib_without_splitting_a_character() -> None:
    failure = cli_error.classify(CliError("é" * 1000))
    assert len(failure.message.encode()) <= 1024
    assert failure.message == "é" * 512


@pytest.mark.parametrize(
    ("kind", "status", "needs_user_action", "terminal_reason"),
    [
        (FailureKind.AUTH, TaskOutcomeStatus.BLOCKED, True, "agent_cli_error"),
        (FailureKind.RATE_LIMIT, TaskOutcomeStatus.BLOCKED, False, "agent_cli_error"),
        (FailureKind.CONFIG, TaskOutcomeStatus.BLOCKED, True, "agent_cli_error"),
        (FailureKind.MAX_TURNS, TaskOutcomeStatus.FAILED, False, "max_turns"),
        (FailureKind.AGENT_CLI_ERROR, TaskOutcomeStatus.FAILED, False, "agent_cli_error"),
    ],
)
def test_r13e_r36_each_kind_gives_its_outcome(
    kind: FailureKind, status: TaskOutcomeStatus, needs_user_action: bool, terminal_reason: str
) -> None:
    messages = {
        FailureKind.AUTH: "Not logged in",
        FailureKind.RATE_LIMIT: "rate limit",
        FailureKind.CONFIG: "model not found",
        FailureKind.MAX_TURNS: "out of turns",
        FailureKind.AGENT_CLI_ERROR: "boom",
    }
    failure = cli_error.classify(CliError(messages[kind], max_turns=kind is FailureKind.MAX_TURNS))
    assert failure.kind is kind
    result = outcome.from_failure(failure, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert (result.status, result.needs_user_action, result.terminal_reason) == (
        status,
        needs_user_action,
        terminal_reason,
    )
    assert result.blockers[0].message == messages[kind]
    assert result.blockers[0].type == kind.value
