"""`python -m devcluster up|down|env|status|restart COMPONENT`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from devcluster.build import BuildError
from devcluster.cluster import RESTARTABLE, ClusterError, down, environment, restart, status, up
from devcluster.layout import default_layout


def _print_env() -> None:
    layout = default_layout()
    for name, value in environment(layout).items():
        if name == "PATH":
            # Leave $PATH for the shell to expand, so the line stays valid in any session.
            print(f'export PATH={shlex.quote(str(layout.bin))}{os.pathsep}"$PATH"')
        else:
            print(f"export {name}={shlex.quote(value)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devcluster",
        description="A local Kubernetes control plane, process node and S3 store.",
    )
    parser.add_argument(
        "command",
        choices=("up", "down", "env", "status", "restart"),
        help="up: build and start (idempotent); down: stop everything; "
        "env: print shell exports; status: show each process; "
        "restart COMPONENT: stop and start one process",
    )
    parser.add_argument("component", nargs="?", choices=sorted(RESTARTABLE))
    arguments = parser.parse_args(argv)
    if (arguments.command == "restart") != (arguments.component is not None):
        parser.error("restart takes one COMPONENT; the other commands take none")
    try:
        if arguments.command == "restart":
            restart(arguments.component)
        elif arguments.command == "up":
            up()
        elif arguments.command == "down":
            down()
        elif arguments.command == "env":
            _print_env()
        else:
            return 0 if status() else 1
    except (BuildError, ClusterError) as error:
        print(f"devcluster: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
