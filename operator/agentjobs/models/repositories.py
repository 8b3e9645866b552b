"""The git repositories of an Execution's workspace (spec ``repositories[]``) and what each
phase did with them (status ``repositories[]``).

Each repository is checked out at ``/workspace/<name>`` before a phase's agent starts, by a
container of ours that holds its credentials; the agent's container never sees them unless
``agentCredentials`` says so. The spec's rules are CEL, each with a message that says how
to fix the mistake; which ``http://`` servers the operator talks to is the operator's own
allow-list, as for webhooks.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, WithJsonSchema

from agentjobs.models.contract import ContractModel
from agentjobs.models.kubernetes import (
    DNS_LABEL,
    MAX_URL_LENGTH,
    KubernetesModel,
    SubdomainName,
    cel_rules,
    http_url_schema,
)

MAX_REPOSITORIES = 8
MAX_REF_LENGTH = 255
WORKSPACE_RESERVED = "artifacts"  # /workspace/artifacts is the harvester's


RepositoryName = Annotated[
    str,
    Field(min_length=1, max_length=63),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": 63,
            **cel_rules(
                (
                    f"self.matches('{DNS_LABEL}')",
                    "a repository's name must be a DNS label: it is its directory, "
                    "/workspace/<name>",
                ),
                (
                    f"self != '{WORKSPACE_RESERVED}'",
                    "a repository cannot be named artifacts: /workspace/artifacts holds the "
                    "phase's output",
                ),
            ),
        }
    ),
]

RepositoryUrl = Annotated[
    str,
    Field(min_length=1, max_length=MAX_URL_LENGTH),
    http_url_schema(
        "--git-allow",
        (
            "self.matches('^https?://[^/?#@]+/.+$')",
            "url must name a host and a repository path, and no user or password: "
            "credentialsSecret holds the credentials, where the agent cannot read them",
        ),
        ("!self.contains('?') && !self.contains('#')", "url must not have a ?query or a #fragment"),
    ),
]

# A safe subset of git's ref names (git check-ref-format): nothing git or a shell would read
# as anything but a name.
GitRef = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REF_LENGTH),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_REF_LENGTH,
            **cel_rules(
                (
                    "self.matches('^[A-Za-z0-9_][A-Za-z0-9._/-]*$')"
                    " && !self.contains('..') && !self.contains('//') && !self.contains('/.')"
                    " && !self.endsWith('/') && !self.endsWith('.') && !self.endsWith('.lock')",
                    "must be a git branch, tag or commit: letters, digits and . _ / -, starting "
                    "with a letter, digit or _, without '..', '//', '/.' or a trailing '/', '.' "
                    "or '.lock'",
                ),
            ),
        }
    ),
]


class GitCredentials(KubernetesModel):
    """A Secret in the Execution's namespace: key ``token``, and optionally ``username``."""

    name: SubdomainName


class PushSettings(KubernetesModel):
    """Where a phase's commits are pushed at the end of each attempt (never forced)."""

    branch: GitRef | None = None  # default agentjobs/<execution>


class Repository(KubernetesModel):
    """One repository checked out in every phase's workspace (unless a phase narrows them)."""

    name: RepositoryName
    url: RepositoryUrl
    ref: GitRef | None = None  # default the remote's HEAD
    depth: int | None = Field(default=None, ge=1, le=1_000_000)
    credentials_secret: GitCredentials | None = None
    push: PushSettings | None = None  # omitted: nothing is pushed
    # True hands the token to the agent's container too, for agents that open pull requests.
    agent_credentials: bool = False


Repositories = Annotated[
    list[Repository],
    Field(
        max_length=MAX_REPOSITORIES,
        json_schema_extra=cel_rules(
            (
                "self.all(r, self.exists_one(s, s.name == r.name))",
                "repository names must be unique within an execution",
            ),
        ),
    ),
]


# A commit named by its full SHA-1 object id, as the harvester records it.
CommitId = Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")]


class HandedWork(KubernetesModel):
    """The work an earlier phase left on a repository's work branch: its last commit, the
    commit on the remote it builds on (``since``), and the git bundle of the commits between
    (None when there are none), stored with that phase's attempt."""

    commit: CommitId
    since: CommitId
    bundle: str | None = Field(default=None, max_length=MAX_URL_LENGTH)  # s3://bucket/key
    bundle_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


class PhaseRepository(KubernetesModel):
    """One repository as a Phase checks it out (R63): the Execution's spec resolved for it.
    Its fields are checked as the Execution's are, so that a Phase written by hand cannot
    name a directory, a URL or a ref that an Execution could not."""

    name: RepositoryName
    url: RepositoryUrl
    ref: GitRef | None = None
    depth: int | None = Field(default=None, ge=1, le=1_000_000)
    branch: GitRef
    push: bool = False
    credentials_secret: SubdomainName | None = None
    agent_credentials: bool = False
    handed: HandedWork | None = None
    # A grader's checkout (R38): the commit whose diff to the checked-out one is written to
    # artifacts/changes/<name>.diff, the graded attempt's changes.
    diff_from: CommitId | None = None


class RepositoryStatus(ContractModel):
    """What a phase (or, in an Execution's status, its latest phase) did with one repository."""

    name: str
    url: str
    base_ref: str | None = None
    base_commit: str | None = None
    branch: str | None = None
    head_commit: str | None = None
    commits: int = Field(default=0, ge=0)  # on the work branch, since the base
    pushed: bool | None = None  # None: push is off
    push_error: str | None = None  # the server's own words
    workflow_changes_quarantined: bool = False
    uncommitted_changes: bool = False
    # Where the next phase starts from when these commits are not all on the remote.
    bundle: str | None = None
    bundle_sha256: str | None = None
    bundle_base: str | None = None
