"""The outcome contract's vocabulary as types (docs: outcome-contract.md).

Every value a user or an automation reads back (a report, a phase's resolution,
an execution's fields, the unified ``TaskOutcome``) is one of these models.
Python code uses snake_case; the Kubernetes side reads and writes camelCase
through the aliases.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ContractModel(BaseModel):
    """Base of every contract model: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )


class ReportState(StrEnum):
    """R10: what a log resolves to, ordered by R11's strength."""

    SUCCESS = "success"
    FAILURE = "failure"
    UNREADABLE = "unreadable"
    NOT_REPORTED = "not_reported"


class FailureReason(StrEnum):
    """R7: the agent's own word for a failure."""

    TASK = "task"
    PLATFORM = "platform"
    REFUSED = "refused"
    UNKNOWN = "unknown"


class SideEffects(StrEnum):
    """R8: what happened to the external writes a phase attempted."""

    NONE = "none"
    SUCCEEDED = "succeeded"
    DENIED = "denied"
    FAILED = "failed"


class PhaseStatus(StrEnum):
    """R16-R22a: how a phase ended (``running`` while it has not)."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class ExecutionStatus(StrEnum):
    """R23: the execution's status."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class FailureClassification(StrEnum):
    """What the platform concluded about a failure (never moved by the agent's word)."""

    PLATFORM = "platform"
    CORRECT_REFUSAL = "correct_refusal"
    UNCLASSIFIED = "unclassified"
    OUTCOME_NOT_MET = "outcome_not_met"  # R41: the grader's rubric was not met in time


class TranscriptFormat(StrEnum):
    """R13, R13b: how the agent container's log is laid out.

    ``jsonl`` recognises the CLI from the stream; the others name it.
    """

    TEXT = "text"
    JSONL = "jsonl"
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"
    GEMINI_CLI = "gemini-cli"
    OPENCODE = "opencode"


class Blocker(ContractModel):
    """R36: one thing that stood in the way."""

    type: str
    message: str
    recoverable: bool


class Report(ContractModel):
    """What the agent said about itself, as read from its log (R1-R13, R36a)."""

    state: ReportState
    success: bool | None = None
    failure_reason: FailureReason | None = None
    side_effects: SideEffects | None = None
    comments: str | None = None
    blockers: list[Blocker] | None = None  # None: not reported; []: reported as none
    confidence: float | None = None
    needs_user_action: bool | None = None
    warnings: list[str] = []


class FailureKind(StrEnum):
    """Why the system, not the agent, ended a phase (R36).

    The first five, and ``budget``, are the recoverable kinds that R36 turns into
    ``blocked``.
    """

    AUTH = "auth"
    QUOTA = "quota"
    CONFIG = "config"
    RATE_LIMIT = "rate_limit"
    TRANSIENT = "transient"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out_of_memory"
    CRASH = "crash"
    UNREADABLE_REPORT = "unreadable_report"
    STREAM_BROKEN = "stream_broken"
    NO_USABLE_OUTPUT = "no_usable_output"
    MAX_TURNS = "max_turns"
    BUDGET = "budget"  # R70: a spend limit stopped the agent
    STUCK = "stuck"  # R70: the agent printed nothing for its idleSeconds
    AGENT_CLI_ERROR = "agent_cli_error"
    GRADER_FAILED = "grader_failed"
    OPERATOR_ERROR = "operator_error"  # R55: the operator could not judge the run


class Usage(ContractModel):
    """R13f: tokens and cost an agent CLI reported; None where it reported nothing."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cost_usd: float | None = None
    turns: int | None = None  # R69: the assistant turns the transcript marked


class SystemFailure(ContractModel):
    """A failure observed by the platform: its kind, a short code and a message for people."""

    kind: FailureKind
    code: str
    message: str


class GradeState(StrEnum):
    """R39: what a grader's log resolves to, ordered by its strength."""

    FAILED = "failed"
    NEEDS_REVISION = "needs_revision"
    SATISFIED = "satisfied"
    UNREADABLE = "unreadable"
    NOT_REPORTED = "not_reported"


class Criterion(ContractModel):
    """R39: one criterion of the rubric as the grader judged it."""

    name: str
    met: bool
    feedback: str | None = None


class Grade(ContractModel):
    """What a grader said about one iteration's deliverable, as read from its log (R39)."""

    state: GradeState
    explanation: str | None = None
    criteria: list[Criterion] = []
    usage: Usage | None = None
    warnings: list[str] = []


class EvaluationResult(StrEnum):
    """R40: how one evaluation of the outcome loop ended."""

    SATISFIED = "satisfied"
    NEEDS_REVISION = "needs_revision"
    MAX_ITERATIONS_REACHED = "max_iterations_reached"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class TaskOutcomeStatus(StrEnum):
    """R36: the semantic assessment of a phase or execution."""

    SUCCESS = "success"
    PARTIAL_SUCCESS = "partial_success"
    BLOCKED = "blocked"
    FAILED = "failed"
    UNKNOWN = "unknown"


class TaskOutcomeSource(StrEnum):
    """R36: who wrote the outcome: the agent that finished, or the system that saw the run end."""

    AGENT = "agent"
    SYSTEM = "system"


class TaskOutcome(ContractModel):
    """R36: the one machine-readable outcome every phase and execution ends with."""

    status: TaskOutcomeStatus
    source: TaskOutcomeSource
    summary: str
    blockers: list[Blocker] = []
    # R57: how many blockers are not listed (a status lists at most 20).
    blockers_omitted: int | None = None
    needs_user_action: bool = False
    confidence: float | None = None
    terminal_reason: str
    reported_at: datetime


KeptAs = Literal["failed_phase", "partial"]


class Artifact(ContractModel):
    """One artifact of a phase (R28-R34).

    ``content`` is set only for artifacts the operator writes itself (recovered
    from the transcript); files the phase wrote are stored as they are.
    """

    path: str
    title: str
    size: int
    recovered: bool = False
    kept_as: KeptAs | None = None
    content: str | None = None
