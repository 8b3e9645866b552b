"""`agentjobs crds`: write (or check) the CRDs generated from the models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agentjobs.adapters import crd_files

HELP = "write the CustomResourceDefinitions generated from the models"
DESCRIPTION = "Regenerate crds/*.yaml from the resource models, or check them with --check."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", type=Path, default=Path("crds"), metavar="DIR")
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a file in DIR differs from what would be written",
    )


def run(args: argparse.Namespace) -> int:
    stale = []
    for name, text in crd_files.render().items():
        path = args.directory / name
        if path.exists() and path.read_text() == text:
            continue
        stale.append(str(path))
        if not args.check:
            args.directory.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if args.check and stale:
        joined = ", ".join(stale)
        print(f"agentjobs: error: stale CRDs, run `agentjobs crds`: {joined}", file=sys.stderr)
        return 1
    return 0
