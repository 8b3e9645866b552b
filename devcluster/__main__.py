"""`python -m devcluster up|down|env|status|restart COMPONENT`, `up|env --s3 STORE`,
`up --kwok`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from devcluster.build import BuildError
from devcluster.cluster import RESTARTABLE, ClusterError, down, environment, restart, status, up
from devcluster.layout import default_layout
from devcluster.stores import S3_STORES


def _print_env(store: str | None) -> None:
    layout = default_layout()
    for name, value in environment(layout, store).items():
        if name == "PATH":
            # Leave $PATH for the shell to expand, so the line stays valid in any session.
            print(f'export PATH={shlex.quote(str(layout.bin))}{os.pathsep}"$PATH"')
        else:
            print(f"export {name}={shlex.quote(value)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devcluster",
        description="A local Kubernetes control plane, node and S3 stores.",
    )
    parser.add_argument(
        "command",
        choices=("up", "down", "env", "status", "restart"),
        help="up: build and start (idempotent); down: stop everything; "
        "env: print shell exports; status: show each process; "
        "restart COMPONENT: stop and start one process",
    )
    parser.add_argument("component", nargs="?", choices=sorted(RESTARTABLE))
    parser.add_argument(
        "--s3",
        action="append",
        choices=sorted(S3_STORES),
        metavar="STORE",
        help=f"up: start this S3 store (one of {', '.join(sorted(S3_STORES))}; repeat it for "
        "both, each on its own port; default versitygw, or those already chosen); "
        "env: point AGENTJOBS_S3_* at this store (default: the first one chosen)",
    )
    parser.add_argument(
        "--kwok",
        action="store_true",
        help="up: also start the simulated (kwok) nodes, tainted, for the scale benchmark",
    )
    arguments = parser.parse_args(argv)
    if (arguments.command == "restart") != (arguments.component is not None):
        parser.error("restart takes one COMPONENT; the other commands take none")
    if arguments.s3 and arguments.command not in ("up", "env"):
        parser.error("--s3 goes with up or env")
    if arguments.kwok and arguments.command != "up":
        parser.error("--kwok goes with up")
    if arguments.command == "env" and arguments.s3 and len(arguments.s3) > 1:
        parser.error("env takes one --s3 STORE")
    try:
        if arguments.command == "restart":
            restart(arguments.component)
        elif arguments.command == "up":
            up(s3=arguments.s3, simulated_nodes=arguments.kwok)
        elif arguments.command == "down":
            down()
        elif arguments.command == "env":
            _print_env(arguments.s3[0] if arguments.s3 else None)
        else:
            return 0 if status() else 1
    except (BuildError, ClusterError) as error:
        print(f"devcluster: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
