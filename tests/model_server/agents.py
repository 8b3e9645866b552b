"""The agent CLI images as the tests run them against the scripted model server."""

from __future__ import annotations

from dataclasses import dataclass

from devcluster.images.catalog import CLAUDE_CODE_IMAGE, CODEX_IMAGE, GEMINI_CLI_IMAGE
from tests import builders


@dataclass(frozen=True)
class Cli:
    name: str
    image: str
    # The example's Secret, and the address of the vendor's API it names.
    secret: str
    api: str

    def env(self, server: str, key: str) -> list[dict[str, str]]:
        """The phase's env: the API key, the server, and no retries or model choice to wait on."""
        variables = {
            "claude-code": {
                "ANTHROPIC_BASE_URL": server,
                "ANTHROPIC_API_KEY": key,
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            "codex": {
                "OPENAI_BASE_URL": f"{server}/v1",
                "OPENAI_API_KEY": key,
                "CODEX_MAX_RETRIES": "0",
            },
            "gemini-cli": {
                "GOOGLE_GEMINI_BASE_URL": server,
                "GEMINI_API_KEY": key,
                "GEMINI_MODEL": "gemini-2.5-flash",
                "GEMINI_MAX_ATTEMPTS": "1",
            },
        }[self.name]
        return [{"name": name, "value": value} for name, value in variables.items()]


CLIS = [
    Cli("claude-code", CLAUDE_CODE_IMAGE, "anthropic", "https://api.anthropic.com"),
    Cli("codex", CODEX_IMAGE, "openai", "https://api.openai.com"),
    Cli("gemini-cli", GEMINI_CLI_IMAGE, "gemini", "https://generativelanguage.googleapis.com"),
]


def report(success: bool, comments: str, failure_reason: str | None = None) -> str:
    reason = {} if failure_reason is None else {"failure_reason": failure_reason}
    return builders.block(builders.report(success, comments, **reason))
