"""R5-R9, R36a: what a closed report's JSON body says.

The body has already been cut out of the log by the reader (R1-R4); this
module only interprets it. Every way a body can be wrong ends in an
``unreadable`` report whose first warning says why, so that an operator can
tell the agent's author what to fix.
"""

from __future__ import annotations

from typing import Any

from agentjobs.contract.text import agent_text, blocks, json_body
from agentjobs.models.contract import Blocker, FailureReason, Report, ReportState, SideEffects

BLOCKERS_LIMIT = 20
_FAILURE_REASONS = {reason.value: reason for reason in FailureReason}
_SIDE_EFFECTS = {word.value: word for word in SideEffects}
_LEGACY_STATUS = {"completed": True, "failed": False}
_json_type = json_body.json_type
_STRENGTH = {  # R11
    ReportState.FAILURE: 3,
    ReportState.SUCCESS: 2,
    ReportState.UNREADABLE: 1,
    ReportState.NOT_REPORTED: 0,
}


def unreadable(reason: str, warnings: list[str] | None = None) -> Report:
    """An unreadable report whose first warning names the reason."""
    return Report(
        state=ReportState.UNREADABLE, warnings=[f"unreadable report: {reason}"] + (warnings or [])
    )


def read_report_body(body: str, *, warnings: list[str]) -> Report:
    """Interpret one report body (R5-R9); ``warnings`` are the reader's own (e.g. R4's fence)."""
    try:
        value = json_body.load_object(body)
    except json_body.NotOneObject as error:
        return unreadable(str(error), warnings)
    return _read_object(value, list(warnings))


def _read_object(body: dict[str, Any], warnings: list[str]) -> Report:
    success = body.get("success")
    if "success" in body:
        if not isinstance(success, bool):
            return unreadable(f"`success` is {_json_type(success)}, not a JSON boolean", warnings)
    else:
        status = body.get("status")
        if not isinstance(status, str) or status not in _LEGACY_STATUS:
            found = "missing" if "status" not in body else f"{_json_type(status)} {status!r}"[:80]
            return unreadable(f"no boolean `success`, and the legacy `status` is {found}", warnings)
        success = _LEGACY_STATUS[status]
        warnings.append(f'legacy `status: "{status}"` read as `success: {str(success).lower()}`')

    failure_reason: FailureReason | None = None
    raw_reason = body.get("failure_reason")
    if success:
        if "failure_reason" in body:
            warnings.append("`failure_reason` ignored because `success` is true")
    else:
        failure_reason = _FAILURE_REASONS.get(raw_reason) if isinstance(raw_reason, str) else None
        if failure_reason is None:
            found = "missing" if "failure_reason" not in body else repr(raw_reason)[:80]
            warnings.append(
                f"`failure_reason` recorded as null: {found} is not one of "
                "task, platform, refused, unknown"
            )

    side_effects: SideEffects | None = None
    if "side_effects" in body:
        raw_side_effects = body["side_effects"]
        if isinstance(raw_side_effects, str):
            side_effects = _SIDE_EFFECTS.get(raw_side_effects)
        if side_effects is None:
            warnings.append(
                f"`side_effects` recorded as not reported: {raw_side_effects!r:.80} "
                "is not one of none, succeeded, denied, failed"
            )

    comments = body.get("comments")
    if comments is not None and not isinstance(comments, str):
        warnings.append(f"`comments` dropped: it is {_json_type(comments)}, not a string")
        comments = None

    return Report(
        state=ReportState.SUCCESS if success else ReportState.FAILURE,
        success=success,
        failure_reason=failure_reason,
        side_effects=side_effects,
        comments=comments,
        blockers=_blockers(body, warnings),
        confidence=_confidence(body, warnings),
        needs_user_action=_needs_user_action(body, warnings),
        warnings=warnings,
    )


def _blockers(body: dict[str, Any], warnings: list[str]) -> list[Blocker] | None:
    """R36a: at most 20 ``{type, message, recoverable}``, strings cut at 1 KiB."""
    if "blockers" not in body:
        return None
    items = body["blockers"]
    if not isinstance(items, list):
        warnings.append(f"`blockers` dropped: it is {_json_type(items)}, not an array")
        return None
    if len(items) > BLOCKERS_LIMIT:
        warnings.append(f"`blockers` cut to the first {BLOCKERS_LIMIT} of {len(items)}")
    blockers = []
    for index, item in enumerate(items[:BLOCKERS_LIMIT]):
        if not (
            isinstance(item, dict)
            and isinstance(item.get("type"), str)
            and isinstance(item.get("message"), str)
            and isinstance(item.get("recoverable"), bool)
        ):
            warnings.append(
                f"`blockers[{index}]` dropped: not an object with a string `type`, "
                "a string `message` and a boolean `recoverable`"
            )
            continue
        blockers.append(
            Blocker(
                type=agent_text.cut(item["type"], agent_text.SHORT_TEXT_BYTES),
                message=agent_text.cut(item["message"], agent_text.SHORT_TEXT_BYTES),
                recoverable=item["recoverable"],
            )
        )
    return blockers


def _confidence(body: dict[str, Any], warnings: list[str]) -> float | None:
    """R36a: a number from 0 to 1, else null."""
    if "confidence" not in body:
        return None
    value = body["confidence"]
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    warnings.append(f"`confidence` recorded as null: {value!r:.80} is not a number from 0 to 1")
    return None


def _needs_user_action(body: dict[str, Any], warnings: list[str]) -> bool | None:
    if "needs_user_action" not in body:
        return None
    value = body["needs_user_action"]
    if isinstance(value, bool):
        return value
    warnings.append(f"`needs_user_action` recorded as null: it is {_json_type(value)}")
    return None


def comments_for_status(comments: str | None) -> str | None:
    """R9: ``comments`` cut to 4 KiB of UTF-8 for a CR status (the report artifact keeps it all)."""
    if comments is None:
        return None
    return agent_text.cut(comments, agent_text.LONG_TEXT_BYTES)


def _read(body: str, warnings: list[str]) -> Report:
    return read_report_body(body, warnings=warnings)


def _noted(report: Report, note: str) -> Report:
    return report.model_copy(update={"warnings": [*report.warnings, note]})


TASK_RESULT = blocks.BlockKind[Report](
    name="TASK_RESULT",
    noun="report",
    read_body=_read,
    unreadable=unreadable,
    strength=lambda report: _STRENGTH[report.state],
    state=lambda report: report.state.value,
    noted=_noted,
    absent=Report(state=ReportState.NOT_REPORTED),
)
