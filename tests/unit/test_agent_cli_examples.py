"""The agent-CLI examples in manifests/examples/agents/ are valid Executions that wrap their CLI.

Cases: each parses as an Execution spec; it names its CLI's transcript
format, reads the prompt file, sets a writable HOME and takes its API key
from a Secret.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentjobs.models.resources import ExecutionSpec

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples" / "agents"


@pytest.mark.parametrize(
    ("name", "transcript_format", "key"),
    [
        ("claude-code.yaml", "claude-code", "ANTHROPIC_API_KEY"),
        ("codex.yaml", "codex", "OPENAI_API_KEY"),
        ("gemini-cli.yaml", "gemini-cli", "GEMINI_API_KEY"),
    ],
)
def test_each_example_wraps_its_cli(name: str, transcript_format: str, key: str) -> None:
    manifest = yaml.safe_load((EXAMPLES / name).read_text())
    assert manifest["kind"] == "Execution"
    phase = ExecutionSpec.model_validate(manifest["spec"]).phases[0]
    assert phase.transcript_format is not None
    assert phase.transcript_format.value == transcript_format
    env = {variable.name: variable for variable in phase.env or []}
    assert env["HOME"].value is not None and env["HOME"].value.startswith("/tmp/")
    assert env[key].value_from is not None
    assert env[key].value_from.secret_key_ref is not None
    assert '"$AGENTJOBS_PROMPT_FILE"' in " ".join(phase.args or [])
