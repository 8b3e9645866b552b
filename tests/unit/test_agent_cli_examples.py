"""The agent-CLI examples in manifests/examples/agents/ are valid Executions that run our
agent CLI images as they are.

Cases: each parses as an Execution spec; it runs the image built from manifests/agents for
its CLI with the image's own entrypoint, names the CLI's transcript format, takes its API key
from a Secret, and names the vendor's API in a variable of its own, where a gateway (or the
tests' model server) goes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentjobs.models.resources import ExecutionSpec
from devcluster.images.catalog import CLAUDE_CODE_IMAGE, CODEX_IMAGE, GEMINI_CLI_IMAGE

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples" / "agents"


@pytest.mark.parametrize(
    ("name", "image", "key", "base_url"),
    [
        ("claude-code", CLAUDE_CODE_IMAGE, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        ("codex", CODEX_IMAGE, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        ("gemini-cli", GEMINI_CLI_IMAGE, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
    ],
)
def test_each_example_runs_its_clis_image(name: str, image: str, key: str, base_url: str) -> None:
    manifest = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    assert manifest["kind"] == "Execution"
    phase = ExecutionSpec.model_validate(manifest["spec"]).phases[0]
    assert phase.image == image
    assert (phase.command, phase.args) == (None, None)
    assert phase.transcript_format is not None
    assert phase.transcript_format.value == name
    env = {variable.name: variable for variable in phase.env or []}
    assert env[key].value_from is not None
    assert env[key].value_from.secret_key_ref is not None
    assert (env[base_url].value or "").startswith("https://")


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli"])
def test_each_example_works_on_a_repository_the_agent_holds_no_token_for(name: str) -> None:
    manifest = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    spec = ExecutionSpec.model_validate(manifest["spec"])
    [repository] = spec.repositories
    assert repository.url.startswith("https://")
    assert repository.credentials_secret is not None and repository.push is not None
    assert not repository.agent_credentials
    assert "/workspace/service" in (spec.phases[0].prompt or "")
