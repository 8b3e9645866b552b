"""`agentjobs report`: read an agent's log offline and print the verdict as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentjobs.adapters import output_dir
from agentjobs.cli import log_input
from agentjobs.contract.artifacts import artifact_rule
from agentjobs.contract.limits import guard, prices
from agentjobs.contract.outcome import phase
from agentjobs.contract.reading.transcript_reader import TranscriptReader
from agentjobs.contract.reading.transcripts import formats
from agentjobs.contract.resolution import resolution
from agentjobs.models.contract import TranscriptFormat
from agentjobs.models.limits import ExecutionLimits, PriceTable

HELP = "read an agent's log offline and print the verdict as one JSON object"
DESCRIPTION = (
    "Read an agent's log (a file, or - for stdin) through the streaming "
    "TASK_RESULT reader and print the phase's verdict as one JSON object."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    log_input.add_format_argument(parser)
    parser.add_argument(
        "--exit-code",
        type=int,
        default=0,
        metavar="N",
        help="the agent container's exit code (default: 0)",
    )
    parser.add_argument(
        "--stream-broken", action="store_true", help="the log was not read whole (R14)"
    )
    parser.add_argument("--cancelled", action="store_true", help="the phase was cancelled")
    parser.add_argument(
        "--artifacts",
        type=Path,
        metavar="DIR",
        help="the phase's artifacts/output directory, to apply the artifact rule",
    )
    parser.add_argument(
        "--phase-name",
        default="phase",
        metavar="NAME",
        help="the phase's name, used in recovered artifacts and errors",
    )
    limits = parser.add_argument_group(
        "limits (R70)", "print where a run with these limits would have been stopped"
    )
    limits.add_argument("--max-cost-usd", metavar="USD", help="a cost limit, e.g. 2.50")
    limits.add_argument("--max-tokens", type=int, metavar="N", help="input and output tokens")
    limits.add_argument("--max-turns", type=int, metavar="N", help="assistant turns")
    limits.add_argument(
        "--price-table",
        type=Path,
        metavar="FILE",
        help="the operator's price table (YAML), for CLIs that report no cost (R68)",
    )
    log_input.add_log_argument(parser)


class LimitArgumentError(ValueError):
    """A limit or price table given on the command line that cannot be used."""


def _limits(args: argparse.Namespace) -> ExecutionLimits | None:
    given = {
        "maxCostUsd": args.max_cost_usd,
        "maxTokens": args.max_tokens,
        "maxTurns": args.max_turns,
    }
    if all(value is None for value in given.values()):
        return None
    try:
        return ExecutionLimits.model_validate({k: v for k, v in given.items() if v is not None})
    except ValueError as error:
        first = error.errors()[0] if isinstance(error, ValidationError) else None
        detail = f"{first['loc'][0]}: {first['msg']}" if first else str(error)
        raise LimitArgumentError(f"a limit cannot be used: {detail}") from error


def _price_table(path: Path | None) -> PriceTable | None:
    if path is None:
        return None
    try:
        return prices.parse(path.read_text(encoding="utf-8"))
    except prices.PriceTableError as error:
        raise LimitArgumentError(f"{path}: {error}") from error


def _stop(reader: TranscriptReader, limits: ExecutionLimits | None) -> dict[str, Any] | None:
    """Where the run would have been stopped (R70), or None."""
    passed = reader.limit_passed
    if limits is None or passed is None:
        return None
    crossing = passed.crossing
    return {
        "line": passed.line,
        "limit": crossing.limit.value,
        "allowed": crossing.allowed,
        "used": crossing.used,
        "terminal_reason": crossing.failure.code,
    }


def verdict(args: argparse.Namespace) -> dict[str, Any]:
    transcript_format = TranscriptFormat(args.format)
    limits = _limits(args)
    reader = TranscriptReader(
        transcript_format, prices=_price_table(args.price_table), limits=limits
    )
    log_input.feed(args.log, reader)
    spent = reader.spent()
    verdict = reader.close()
    output = output_dir.list_output(args.artifacts) if args.artifacts is not None else None
    warnings = list(verdict.report.warnings)
    needs_terminal_event = formats.has_events(transcript_format)
    stream_intact = resolution.stream_intact(
        read_from_first_byte=True,
        read_to_end_after_exit=True,
        resumed_without_gap=not args.stream_broken,
        needs_terminal_event=needs_terminal_event,
        terminal_event_seen=verdict.terminal_event_seen,
    )
    if needs_terminal_event and not verdict.terminal_event_seen:
        warnings.append(
            f"no terminal result event in the {transcript_format} transcript: stream broken (R14)"
        )
    result = phase.resolve_phase(
        report=verdict.report,
        run=resolution.RunFacts(
            exit_code=args.exit_code,
            stream_intact=stream_intact,
            cancelled=args.cancelled,
            agent_cli_error=verdict.agent_cli_error,
        ),
        output=output,
        recovery=artifact_rule.RecoveryContext(
            phase_name=args.phase_name, last_message=verdict.last_message
        ),
        now=datetime.now(UTC),
    )
    report = verdict.report
    printed: dict[str, Any] = {
        "state": report.state.value,
        "success": report.success,
        "failure_reason": report.failure_reason,
        "side_effects": report.side_effects,
        "comments": report.comments,
        "warnings": warnings,
        "phase": result.status.value,
        "failure_classification": result.failure_classification,
        "reported_failure_reason": result.reported_failure_reason,
        "last_message": verdict.last_message,
        "stream_intact": stream_intact,
        "agent_cli_error": verdict.agent_cli_error.message if verdict.agent_cli_error else None,
        "usage": verdict.usage.model_dump(mode="json", by_alias=True) if verdict.usage else None,
        "task_outcome": result.task_outcome.model_dump(mode="json"),
    }
    if result.artifacts is not None:
        warnings.extend(result.artifacts.warnings)
        printed["artifacts"] = [
            artifact.model_dump(
                mode="json", include={"path", "title", "size", "recovered", "kept_as"}
            )
            for artifact in result.artifacts.artifacts
        ]
        printed["deliverable_recovered"] = result.artifacts.deliverable_recovered
        printed["error"] = result.error
    if limits is not None:
        printed["limits"] = [use.model_dump(mode="json") for use in guard.uses(limits, spent)]
        printed["stopped_at"] = _stop(reader, limits)
    return printed


def run(args: argparse.Namespace) -> int:
    try:
        printed = verdict(args)
    except LimitArgumentError as error:
        print(f"agentjobs: error: {error}", file=sys.stderr)
        return 2
    except (OSError, output_dir.NotADirectory) as error:
        message = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        target = getattr(error, "filename", None)
        prefix = f"{target}: " if target and str(target) not in message else ""
        print(f"agentjobs: error: {prefix}{message}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug: named in one line
        return log_input.unexpected(error)
    json.dump(printed, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
