"""Agent CLIs' transcripts through the operator, on the local cluster (R13b-R13f, R36).

A busybox phase prints one of the project's fixture transcripts as the
agent CLI would, with that CLI's `transcriptFormat`. Cases, one per CLI
(Claude Code, Codex, Gemini CLI, OpenCode): the Phase and the Execution
complete with the agent's report, the stream intact, and the same `usage`
the offline reader gives, summed into the Execution; a CLI's own error after
exit 0 (Codex over its usage limit) fails the phase as platform with a
`blocked` outcome whose blocker is the CLI's message.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.models.contract import TranscriptFormat
from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import OperatorProcess, phase_status, wait_finished
from tests.unit.agent_cli_events import FIXTURES


def execution(name: str, fixture: str, transcript_format: TranscriptFormat) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "phases": [
                {
                    "name": "agent",
                    "image": BUSYBOX,
                    "prompt": "Do it.",
                    "transcriptFormat": transcript_format.value,
                    "command": ["sh", "-c", 'printf "%s" "$TRANSCRIPT"'],
                    "env": [{"name": "TRANSCRIPT", "value": (FIXTURES / fixture).read_text()}],
                }
            ]
        },
    }


def offline_usage(fixture: str, transcript_format: TranscriptFormat) -> dict[str, Any] | None:
    """The usage the offline reader gives, as the status holds it (nulls left out)."""
    reader = TranscriptReader(transcript_format)
    reader.feed((FIXTURES / fixture).read_bytes())
    usage = reader.close().usage
    return usage.model_dump(mode="json", by_alias=True, exclude_none=True) if usage else None


@pytest.mark.parametrize(
    ("name", "fixture", "transcript_format"),
    [
        ("claude-code", "claude-code.jsonl", TranscriptFormat.CLAUDE_CODE),
        ("codex", "codex.jsonl", TranscriptFormat.CODEX),
        ("gemini-cli", "gemini-cli.jsonl", TranscriptFormat.GEMINI_CLI),
        ("opencode", "opencode.jsonl", TranscriptFormat.OPENCODE),
    ],
)
def test_each_clis_transcript_gives_the_agents_verdict_and_usage(
    kubectl: Kubectl,
    namespace: str,
    operator: OperatorProcess,
    name: str,
    fixture: str,
    transcript_format: TranscriptFormat,
) -> None:
    kubectl.apply(execution(name, fixture, transcript_format), namespace)
    status = wait_finished(kubectl, namespace, name)
    assert status["status"] == "completed", status
    assert (status["taskOutcome"]["source"], status["taskOutcome"]["status"]) == (
        "agent",
        "success",
    )
    phase = phase_status(kubectl, namespace, f"{name}-0-agent")
    assert phase["report"]["state"] == "success"
    assert (phase["exitCode"], phase["streamIntact"]) == (0, True)
    assert phase["run"]["terminalEventSeen"] is True
    usage = offline_usage(fixture, transcript_format)
    assert usage is not None
    assert phase["usage"] == usage
    assert status["usage"] == usage


def test_a_clis_own_error_after_exit_0_blocks_the_phase(
    kubectl: Kubectl, namespace: str, operator: OperatorProcess
) -> None:
    manifest = execution("codex-limit", "codex-usage-limit.jsonl", TranscriptFormat.CODEX)
    kubectl.apply(manifest, namespace)
    status = wait_finished(kubectl, namespace, "codex-limit")
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    outcome = status["taskOutcome"]
    assert (outcome["status"], outcome["source"], outcome["terminalReason"]) == (
        "blocked",
        "system",
        "agent_cli_error",
    )
    assert outcome["blockers"][0] == {
        "type": "rate_limit",
        "message": "Usage limit reached for this plan; it resets at 14:00 UTC.",
        "recoverable": True,
    }
    phase = phase_status(kubectl, namespace, "codex-limit-0-agent")
    assert phase["exitCode"] == 0
    assert phase["run"]["agentCliError"]["kind"] == "rate_limit"
