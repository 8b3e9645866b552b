"""`agentjobs timekeeper`: the container that lets the kubelet stop a timed-out agent alone."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from agentjobs.kube import agent_timeout
from agentjobs.sidecars import timekeeper

HELP = "(in a phase pod) answer the agent's timeout probes until the agent has ended"
DESCRIPTION = (
    "Serve the agent's heartbeat and timeout probes on the pod's IP "
    f"({agent_timeout.POD_IP_VARIABLE}) and exit once the agent has ended or is being stopped."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=agent_timeout.TIMEKEEPER_PORT)
    parser.add_argument(
        "--stop-file",
        type=Path,
        metavar="FILE",
        help="stop the agent once this file says anything (R70)",
    )
    parser.add_argument(
        agent_timeout.TIMEOUT_ARGUMENT,
        type=int,
        metavar="N",
        help="with --stop-file: stop the agent this long after the timekeeper started",
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    host = os.environ.get(agent_timeout.POD_IP_VARIABLE)
    if not host:
        print(f"agentjobs: error: {agent_timeout.POD_IP_VARIABLE} is not set", file=sys.stderr)
        return 2
    try:
        timekeeper.serve(
            host,
            args.port,
            stop_file=args.stop_file,
            timeout_seconds=args.timeout_seconds,
            stop_token=os.environ.get(agent_timeout.STOP_TOKEN_VARIABLE) or None,
        )
    except OSError as error:
        print(f"agentjobs: error: cannot serve on {host}:{args.port}: {error}", file=sys.stderr)
        return 1
    return 0
