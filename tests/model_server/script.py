"""What the scripted model answers: one turn per request the agent's loop makes.

A test gives each script an API key of its own; the server finds the script by the key the
CLI sends, so concurrent tests share one server. A `Refuse` turn answers every later request
too (the CLI's retries and its side requests), as a real API keeps refusing a bad key."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Usage:
    """A reply's tokens: `input_tokens` excludes the `cached_tokens` read from the cache."""

    input_tokens: int = 12
    output_tokens: int = 7
    cached_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """The prompt's size as OpenAI and Gemini count it, cached tokens included."""
        return self.input_tokens + self.cached_tokens


@dataclass(frozen=True)
class Say:
    """An assistant text, streamed in these pieces."""

    pieces: tuple[str, ...]
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class RunShell:
    """A call of the CLI's shell tool."""

    command: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class WriteFile:
    """A call of the CLI's own file-writing tool."""

    path: str
    content: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Refuse:
    """An HTTP error with the vendor's own error body: 401, 404 (unknown model), 429, 500."""

    status: int


Turn = Say | RunShell | WriteFile | Refuse
