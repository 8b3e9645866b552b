"""The ``agentjobs`` command line: one module per subcommand."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from agentjobs.cli import (
    artifacts,
    console,
    crds,
    fetch_inputs,
    grade,
    harvest,
    logs,
    report,
    resume,
    run,
    timekeeper,
)

COMMANDS: dict[str, ModuleType] = {
    "report": report,
    "grade": grade,
    "run": run,
    "artifacts": artifacts,
    "logs": logs,
    "console": console,
    "resume": resume,
    "crds": crds,
    "harvest": harvest,
    "fetch-inputs": fetch_inputs,
    "timekeeper": timekeeper,
}


class _OneLineErrors(argparse.ArgumentParser):
    """Bad flags end with one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineErrors(prog="agentjobs", description="Run AI-agent jobs on Kubernetes.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineErrors)
    for name, module in COMMANDS.items():
        command = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    code: int = COMMANDS[args.command].run(args)
    return code
