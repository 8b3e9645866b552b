"""The ``agentjobs`` command line: one module per subcommand."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

# Each subcommand's module is imported only when it runs (or for the list of them): the
# phase pods' sidecars start with every agent, and the operator's own modules (kopf, the
# console, minio) cost each of them a quarter of a second of CPU more.
COMMANDS = (
    "report",
    "grade",
    "run",
    "artifacts",
    "logs",
    "console",
    "resume",
    "crds",
    "harvest",
    "fetch-inputs",
    "timekeeper",
)


def _module(command: str) -> ModuleType:
    return importlib.import_module(f"agentjobs.cli.{command.replace('-', '_')}")


class _OneLineErrors(argparse.ArgumentParser):
    """Bad flags end with one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser(chosen: str | None) -> argparse.ArgumentParser:
    """The parser of the `chosen` subcommand, or of them all when none is known yet."""
    parser = _OneLineErrors(prog="agentjobs", description="Run AI-agent jobs on Kubernetes.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_OneLineErrors)
    for name in [chosen] if chosen else COMMANDS:
        module = _module(name)
        command = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    chosen = arguments[0] if arguments and arguments[0] in COMMANDS else None
    args = _parser(chosen).parse_args(arguments)
    code: int = _module(args.command).run(args)
    return code
