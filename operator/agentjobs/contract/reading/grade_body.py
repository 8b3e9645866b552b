"""R39: what a closed ``GRADE_RESULT`` body says.

The block reader has cut the body out of the grader's log, framed exactly as
a report (R1-R4, R12); this module only interprets it. A ``result`` that is
not exactly ``satisfied``, ``needs_revision`` or ``failed`` makes the grade
unreadable, with a first warning saying why; every other field is optional
and a bad one is dropped with a warning, never changing the result.

Decisions where the contract is silent:

- The body is held to the same JSON as a report (R5): one object, no key
  written twice at its top level.
- ``explanation`` missing or not a string is recorded as null, with a warning.
- A criterion's ``feedback`` of ``null`` means none; of another type, the
  item is malformed and dropped.
- ``usage`` keys other than the four token counts are ignored with a warning;
  a usage with no valid count is recorded as null.
- A ``satisfied`` grade that lists an unmet criterion stands, with a warning:
  the grader's result is its verdict.
"""

from __future__ import annotations

from typing import Any

from agentjobs.contract.text import agent_text, blocks, json_body
from agentjobs.models.contract import Criterion, Grade, GradeState, Usage

RESULTS = {
    state.value: state
    for state in (GradeState.SATISFIED, GradeState.NEEDS_REVISION, GradeState.FAILED)
}
USAGE_NAMES = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
_STRENGTH = {  # R39: failed > needs_revision > satisfied > unreadable
    GradeState.FAILED: 4,
    GradeState.NEEDS_REVISION: 3,
    GradeState.SATISFIED: 2,
    GradeState.UNREADABLE: 1,
    GradeState.NOT_REPORTED: 0,
}
_json_type = json_body.json_type


def unreadable(reason: str, warnings: list[str] | None = None) -> Grade:
    """An unreadable grade whose first warning names the reason."""
    return Grade(
        state=GradeState.UNREADABLE, warnings=[f"unreadable grade: {reason}", *(warnings or [])]
    )


def read_grade_body(body: str, warnings: list[str]) -> Grade:
    """Interpret one grade body; ``warnings`` are the reader's own (e.g. R4's fence)."""
    try:
        value = json_body.load_object(body)
    except json_body.NotOneObject as error:
        return unreadable(str(error), warnings)
    notes = list(warnings)
    raw_result = value.get("result")
    result = RESULTS.get(raw_result) if isinstance(raw_result, str) else None
    if result is None:
        found = "missing" if "result" not in value else f"{_json_type(raw_result)} {raw_result!r}"
        return unreadable(
            f"`result` is {found:.80}, not one of satisfied, needs_revision, failed", warnings
        )
    explanation = value.get("explanation")
    if not isinstance(explanation, str):
        found = "missing" if "explanation" not in value else f"{_json_type(explanation)}"
        notes.append(f"`explanation` recorded as null: it is {found}, not a string")
        explanation = None
    criteria = _criteria(value, notes)
    unmet = [criterion.name for criterion in criteria if not criterion.met]
    if result is GradeState.SATISFIED and unmet:
        notes.append(f"the grade is satisfied although it lists unmet criteria: {', '.join(unmet)}")
    return Grade(
        state=result,
        explanation=explanation,
        criteria=criteria,
        usage=_usage(value, notes),
        warnings=notes,
    )


def _criteria(body: dict[str, Any], warnings: list[str]) -> list[Criterion]:
    """``{name: string, met: boolean, feedback?: string}`` items; a malformed one is dropped."""
    if "criteria" not in body:
        return []
    items = body["criteria"]
    if not isinstance(items, list):
        warnings.append(f"`criteria` dropped: it is {_json_type(items)}, not an array")
        return []
    criteria = []
    for index, item in enumerate(items):
        feedback = item.get("feedback") if isinstance(item, dict) else None
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("met"), bool)
            and (feedback is None or isinstance(feedback, str))
        ):
            warnings.append(
                f"`criteria[{index}]` dropped: not an object with a string `name`, "
                "a boolean `met` and an optional string `feedback`"
            )
            continue
        criteria.append(Criterion(name=item["name"], met=item["met"], feedback=feedback))
    return criteria


def _usage(body: dict[str, Any], warnings: list[str]) -> Usage | None:
    """The token counts under the seed's names, each a non-negative integer."""
    if "usage" not in body:
        return None
    raw = body["usage"]
    if not isinstance(raw, dict):
        warnings.append(f"`usage` dropped: it is {_json_type(raw)}, not an object")
        return None
    counts: dict[str, int] = {}
    for name, count in raw.items():
        if name not in USAGE_NAMES:
            warnings.append(f"`usage.{name:.80}` ignored: not one of {', '.join(USAGE_NAMES)}")
        elif isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            counts[name] = agent_text.count(count)
        else:
            warnings.append(f"`usage.{name}` dropped: {count!r:.80} is not a non-negative integer")
    return Usage.model_validate(counts) if counts else None


def _noted(grade: Grade, note: str) -> Grade:
    return grade.model_copy(update={"warnings": [*grade.warnings, note]})


GRADE_RESULT = blocks.BlockKind[Grade](
    name="GRADE_RESULT",
    noun="grade",
    read_body=read_grade_body,
    unreadable=unreadable,
    strength=lambda grade: _STRENGTH[grade.state],
    state=lambda grade: grade.state.value,
    noted=_noted,
    absent=Grade(state=GradeState.NOT_REPORTED),
)
