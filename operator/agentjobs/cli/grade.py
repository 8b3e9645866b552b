"""`agentjobs grade`: read a grader's log offline and print its grade as JSON (R39)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from agentjobs.cli import log_input
from agentjobs.contract.reading.grade_reader import GradeReader, GradeVerdict
from agentjobs.contract.reading.transcripts import formats
from agentjobs.models.contract import GradeState, TranscriptFormat

HELP = "read a grader's log offline and print its grade as one JSON object"
DESCRIPTION = (
    "Read a grader's log (a file, or - for stdin) through the same streaming reader "
    "as agent logs and print its GRADE_RESULT as one JSON object: result "
    "(satisfied, needs_revision, failed, or null when no block was readable), "
    "explanation, criteria, usage and warnings."
)
_RESULTS = (GradeState.SATISFIED, GradeState.NEEDS_REVISION, GradeState.FAILED)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    log_input.add_format_argument(parser)
    log_input.add_log_argument(parser)


def read(args: argparse.Namespace) -> GradeVerdict:
    reader = GradeReader(TranscriptFormat(args.format))
    log_input.feed(args.log, reader)
    return reader.close()


def printed(verdict: GradeVerdict, transcript_format: TranscriptFormat) -> dict[str, Any]:
    grade = verdict.grade
    warnings = list(grade.warnings)
    if grade.state is GradeState.NOT_REPORTED:
        warnings.append("no GRADE_RESULT block in the log")
    if formats.has_events(transcript_format) and not verdict.terminal_event_seen:
        warnings.append(
            f"no terminal result event in the {transcript_format} transcript: stream broken (R14)"
        )
    if verdict.grader_cli_error is not None:
        warnings.append(f"the grader's CLI reported an error: {verdict.grader_cli_error.message}")
    return {
        "result": grade.state.value if grade.state in _RESULTS else None,
        "explanation": grade.explanation,
        "criteria": [criterion.model_dump(mode="json") for criterion in grade.criteria],
        "usage": verdict.usage.model_dump(mode="json", by_alias=True) if verdict.usage else None,
        "warnings": warnings,
    }


def run(args: argparse.Namespace) -> int:
    try:
        verdict = read(args)
    except OSError as error:
        message = error.strerror or str(error)
        prefix = f"{error.filename}: " if error.filename else ""
        print(f"agentjobs: error: {prefix}{message}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: named in one line
        return log_input.unexpected(error)
    json.dump(printed(verdict, TranscriptFormat(args.format)), sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
