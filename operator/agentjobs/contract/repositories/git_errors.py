"""What a failed clone, fetch or push means, from what git printed.

git's exit code says only that it failed; its standard error says why, in the server's own
words (``remote:`` lines, which forges use for their refusals) or in git's (a ``fatal:``
line). Each fault is decided here once, so a clone, a fetch and a push that fail alike are
treated alike, and what the user sees is the server's sentence, not ours.

Decisions where the issue is silent:

- A 403 is a permission fault, at a clone as at a push: the credentials were accepted and
  may not do this. A 401, or git asking for a user name it cannot prompt for, is an
  authentication fault: the credentials are wrong or missing.
- A server error (5xx), an unreachable or unresolvable host, a timeout and a connection cut
  midway are network faults, the only ones worth trying again.
- A push refused because the remote branch moved on is its own fault: the work is not
  overwritten (no force push), and trying again would not help.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agentjobs.contract.text import agent_text, ansi


class GitFault(StrEnum):
    """Why git failed, as far as what it printed tells."""

    AUTH = "auth"  # the credentials were refused, or none were given
    PERMISSION = "permission"  # accepted, but may not do this: a protected branch, read-only
    WORKFLOW = "workflow"  # a push changing .github/workflows/ without the grant for it
    NOT_FOUND = "not_found"  # no such repository, branch, tag or commit
    MOVED = "moved"  # the remote branch moved on: pushing would overwrite its commits
    NETWORK = "network"  # the server could not be reached, or failed: worth another try
    OTHER = "other"


@dataclass(frozen=True)
class GitFailure:
    fault: GitFault
    message: str  # the server's words when it gave any, else git's last fatal line

    @property
    def retryable(self) -> bool:
        return self.fault is GitFault.NETWORK


# In order: the first pattern that matches decides (a forge's refusal is read before the
# HTTP status git adds to it).
_FAULTS: tuple[tuple[GitFault, re.Pattern[str]], ...] = tuple(
    (fault, re.compile(pattern, re.IGNORECASE))
    for fault, pattern in (
        (GitFault.WORKFLOW, r"refusing to allow .* to create or update workflow"),
        (
            GitFault.PERMISSION,
            r"GH006|protected branch|permission to \S+ denied|write access to repository "
            r"not granted|returned error: 403",
        ),
        (
            GitFault.AUTH,
            r"authentication failed|could not read (username|password)|invalid username or "
            r"password|returned error: 401",
        ),
        (
            GitFault.MOVED,
            r"\[rejected\].*\((fetch first|non-fast-forward)\)|updates were rejected because",
        ),
        (
            GitFault.NOT_FOUND,
            r"repository '[^']*' not found|repository not found|remote branch \S+ not found|"
            r"couldn't find remote ref|not our ref|unadvertised object|returned error: 404",
        ),
        (
            GitFault.NETWORK,
            r"could not resolve (host|proxy)|failed to connect|connection (refused|reset|"
            r"timed out)|timed out|returned error: 5\d\d|early eof|remote end hung up|"
            r"rpc failed|ssl|gnutls",
        ),
    )
)
_REMOTE = re.compile(r"^remote: ?(.*)$")
_GIT_SAYS = re.compile(r"^(fatal|error): ?(.*)$")


def _message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines()]
    remote = [m.group(1).strip() for line in lines if (m := _REMOTE.match(line))]
    said = [text for text in remote if text]
    if not said:
        said = [m.group(2) for line in lines if (m := _GIT_SAYS.match(line))][-1:]
    if not said:
        said = [line for line in lines if line][-1:] or ["git failed and printed nothing"]
    return agent_text.cut(" ".join(said), agent_text.SHORT_TEXT_BYTES)


def classify(stderr: bytes) -> GitFailure:
    """What a failed git command's standard error says went wrong."""
    # Progress lines end in carriage returns, and forges colour their refusals.
    plain = ansi.strip_ansi(stderr.replace(b"\r", b"\n")).decode("utf-8", errors="replace")
    text = agent_text.clean(plain)
    fault = next((fault for fault, pattern in _FAULTS if pattern.search(text)), GitFault.OTHER)
    return GitFailure(fault, _message(text))
