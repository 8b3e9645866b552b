"""R57: a Phase's and an Execution's status fit a byte budget before they are written.

Texts the agent, its CLI, a grader or a listing of the output directory put
into a status are cut to whole characters, and lists are bounded with a count
of what was left out (``artifactCount``, ``skippedCount``,
``criteriaOmitted``, ``blockersOmitted``, a last ``(and N more)`` warning).
The first squeeze is the caps every status gets; a status still over
:data:`STATUS_BUDGET` as the API's JSON is squeezed harder, level by level,
until it fits. Evaluations and attempts are never dropped (the loop and the
retry policy count them), and their number is bounded by the spec: at most
20 iterations and 10 retries.

Why 256 KiB: etcd refuses a request over 1.5 MiB, and a Phase carries its
spec too (an inline prompt of up to a megabyte), its metadata and
``managedFields``; the operator keeps every object it watches in memory, so a
thousand Phases at the budget hold 256 MiB at most. What people and
automations read (the verdict, the first artifacts, the grader's latest
feedback) fits in far less.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from agentjobs.contract.reading import report_body, report_reader
from agentjobs.contract.text import agent_text
from agentjobs.kube.status_patch import dump_status
from agentjobs.models.contract import Blocker, Criterion, Report, SystemFailure, TaskOutcome
from agentjobs.models.outcomes import Evaluation, PhaseOutcome
from agentjobs.models.resource_status import (
    Condition,
    ExecutionResourceStatus,
    PhaseResourceStatus,
    RunCheckpoint,
)

STATUS_BUDGET = 256 * 1024
# A Phase's status lists this many artifacts and warnings at most (the hand-off manifest
# and the harvester's manifest have every one): with paths of at most 768 bytes and
# warnings cut to agent_text.SHORT_TEXT_BYTES, both lists stay far below the API server's 1.5 MiB.
ARTIFACTS_LISTED = 100
CRITERIA_LISTED = 50
BLOCKERS_LISTED = report_body.BLOCKERS_LIMIT  # R36a's bound on an agent's own
WARNINGS_LISTED = 20
LAST_MESSAGE_LIMIT = report_reader.LAST_MESSAGE_LIMIT  # R12's tail of the last message
_MORE = re.compile(r"^\(and ([0-9,]+) more\)$")


@dataclass(frozen=True)
class Squeeze:
    """How hard a status is cut: ``long_text`` for summaries, explanations, errors, comments
    and condition messages; ``short_text`` for blockers, criteria, warnings, reasons and
    failure messages; ``listed`` items of each bounded list (the latest evaluation's
    criteria; an earlier one keeps ``earlier_criteria``)."""

    long_text: int
    short_text: int
    last_message: int
    listed: int
    earlier_criteria: int


LEVELS = (
    Squeeze(
        agent_text.LONG_TEXT_BYTES,
        agent_text.SHORT_TEXT_BYTES,
        LAST_MESSAGE_LIMIT,
        ARTIFACTS_LISTED,
        CRITERIA_LISTED,
    ),
    Squeeze(1024, 256, 16 * 1024, 20, 0),
    Squeeze(256, 64, 1024, 5, 0),
    Squeeze(64, 16, 0, 0, 0),
)
FIELD_CAPS = LEVELS[0]


def status_bytes(status: BaseModel) -> int:
    """The status's size as it is sent: compact JSON, non-ASCII escaped."""
    try:  # pydantic's own JSON: a fifth of the cost of dumping it and encoding that
        return len(status.model_dump_json(by_alias=True, exclude_none=True, ensure_ascii=True))
    except PydanticSerializationError:  # a lone surrogate, which only json escapes
        return len(json.dumps(dump_status(status), separators=(",", ":")))


def fit_phase(status: PhaseResourceStatus, budget: int = STATUS_BUDGET) -> PhaseResourceStatus:
    """``status`` with every field within its caps, squeezed until it fits ``budget`` (or as
    far as it goes)."""
    fitted = status
    for level in LEVELS:
        fitted = squeeze_phase(status, level)
        if status_bytes(fitted) <= budget:
            break
    return fitted


def fit_execution(
    status: ExecutionResourceStatus, budget: int = STATUS_BUDGET
) -> ExecutionResourceStatus:
    """As :func:`fit_phase`, for an Execution's status."""
    fitted = status
    for level in LEVELS:
        fitted = squeeze_execution(status, level)
        if status_bytes(fitted) <= budget:
            break
    return fitted


def squeeze_phase(status: PhaseResourceStatus, level: Squeeze) -> PhaseResourceStatus:
    return status.model_copy(
        update={
            "report": _report(status.report, level),
            "task_outcome": task_outcome(status.task_outcome, level),
            "outcome": _outcome(status.outcome, level),
            "artifacts": status.artifacts[: level.listed],
            "artifact_warnings": [
                agent_text.cut(warning, level.short_text)
                for warning in status.artifact_warnings[: level.listed]
            ],
            "error": _cut(status.error, level.long_text),
            "attempts": [
                a.model_copy(update={"reason": _cut(a.reason, level.short_text)})
                for a in status.attempts
            ],
            "run": _run(status.run, level),
            "conditions": _conditions(status.conditions, level),
        }
    )


def squeeze_execution(status: ExecutionResourceStatus, level: Squeeze) -> ExecutionResourceStatus:
    return status.model_copy(
        update={
            "task_outcome": task_outcome(status.task_outcome, level),
            "notifications": [
                n.model_copy(update={"last_error": _cut(n.last_error, level.short_text)})
                for n in status.notifications
            ],
            "conditions": _conditions(status.conditions, level),
        }
    )


def task_outcome(outcome: TaskOutcome | None, level: Squeeze = FIELD_CAPS) -> TaskOutcome | None:
    """An outcome's summary and blockers cut, at most ``listed`` (and 20) blockers listed."""
    if outcome is None:
        return None
    listed = min(level.listed, BLOCKERS_LISTED)
    kept = [_blocker(b, level.short_text) for b in outcome.blockers[:listed]]
    omitted = (outcome.blockers_omitted or 0) + len(outcome.blockers) - len(kept)
    return outcome.model_copy(
        update={
            "summary": agent_text.cut(outcome.summary, level.long_text),
            "blockers": kept,
            "blockers_omitted": omitted or None,
            "terminal_reason": agent_text.cut(outcome.terminal_reason, level.short_text),
        }
    )


def criteria(
    listed: Sequence[Criterion], *, limit: int, text: int, omitted: int | None = None
) -> tuple[list[Criterion], int | None]:
    """The first ``limit`` criteria with their texts cut, and how many are left out."""
    kept = [
        Criterion(name=agent_text.cut(c.name, text), met=c.met, feedback=_cut(c.feedback, text))
        for c in listed[:limit]
    ]
    left_out = (omitted or 0) + len(listed) - len(kept)
    return kept, left_out or None


def counted_texts(texts: Sequence[str], *, listed: int, limit: int) -> list[str]:
    """The first ``listed`` texts cut to ``limit`` bytes, then ``(and N more)`` for the rest
    (one such entry already last is counted in, so cutting again keeps the count)."""
    items = list(texts)
    more = 0
    if items and (found := _MORE.match(items[-1])) is not None:
        more = int(found[1].replace(",", ""))
        items.pop()
    kept = [agent_text.cut(text, limit) for text in items[:listed]]
    more += len(items) - len(kept)
    return [*kept, f"(and {more:,} more)"] if more else kept


def _cut(text: str | None, limit: int) -> str | None:
    return None if text is None else agent_text.cut(text, limit)


def _blocker(blocker: Blocker, limit: int) -> Blocker:
    return blocker.model_copy(
        update={
            "type": agent_text.cut(blocker.type, limit),
            "message": agent_text.cut(blocker.message, limit),
        }
    )


def _failure(failure: SystemFailure | None, limit: int) -> SystemFailure | None:
    if failure is None:
        return None
    return failure.model_copy(
        update={
            "code": agent_text.cut(failure.code, limit),
            "message": agent_text.cut(failure.message, limit),
        }
    )


def _report(report: Report | None, level: Squeeze) -> Report | None:
    if report is None:
        return None
    blockers = report.blockers
    return report.model_copy(
        update={
            "comments": _cut(report.comments, level.long_text),
            "blockers": None
            if blockers is None
            else [_blocker(b, level.short_text) for b in blockers],
            "warnings": counted_texts(
                report.warnings, listed=min(level.listed, WARNINGS_LISTED), limit=level.short_text
            ),
        }
    )


def _run(run: RunCheckpoint | None, level: Squeeze) -> RunCheckpoint | None:
    if run is None:
        return None
    last = run.last_message
    return run.model_copy(
        update={
            "report": _report(run.report, level),
            "last_message": None
            if last is None or not level.last_message
            else agent_text.cut(last, level.last_message),
            "system_failure": _failure(run.system_failure, level.short_text),
            "agent_cli_error": _failure(run.agent_cli_error, level.short_text),
        }
    )


def _outcome(outcome: PhaseOutcome | None, level: Squeeze) -> PhaseOutcome | None:
    if outcome is None or not outcome.evaluations:
        return outcome
    latest = max(e.iteration for e in outcome.evaluations)
    return outcome.model_copy(
        update={
            "evaluations": [
                _evaluation(
                    e,
                    level,
                    listed=min(level.listed, CRITERIA_LISTED)
                    if e.iteration == latest
                    else level.earlier_criteria,
                )
                for e in outcome.evaluations
            ]
        }
    )


def _evaluation(evaluation: Evaluation, level: Squeeze, *, listed: int) -> Evaluation:
    kept, omitted = criteria(
        evaluation.criteria,
        limit=listed,
        text=level.short_text,
        omitted=evaluation.criteria_omitted,
    )
    return evaluation.model_copy(
        update={
            "explanation": _cut(evaluation.explanation, level.long_text),
            "criteria": kept,
            "criteria_omitted": omitted,
        }
    )


def _conditions(listed: Sequence[Condition], level: Squeeze) -> list[Condition]:
    return [
        c.model_copy(update={"message": agent_text.cut(c.message, level.long_text)}) for c in listed
    ]
