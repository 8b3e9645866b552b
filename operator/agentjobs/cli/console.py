"""`agentjobs console`: the web console, with the user's kubeconfig or in the cluster."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

from agentjobs.cli.option_types import listen_address

HELP = "serve the web console: Executions, verdicts, artifacts and conversations"
DESCRIPTION = (
    "Serve the web console. By default it reads with your kubeconfig, so it shows what you may "
    "see, on 127.0.0.1:8080 only. In the cluster (--user-tokens), every request must carry the "
    "user's Kubernetes bearer token, checked with a TokenReview, and every read is asked of "
    "Kubernetes for that user (SubjectAccessReview). Stored transcripts and artifacts are read "
    "with the AGENTJOBS_S3_* settings, which never reach the browser."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--listen",
        type=listen_address,
        default=("127.0.0.1", 8080),
        metavar="HOST:PORT",
        help="where to serve (default 127.0.0.1:8080)",
    )
    parser.add_argument(
        "--user-tokens",
        action="store_true",
        help="require each user's bearer token and check every read for that user (in-cluster)",
    )
    parser.add_argument("--kubeconfig", metavar="FILE", help="the kubeconfig to read with")


async def _serve(args: argparse.Namespace) -> None:
    from agentjobs.adapters.kube import Kube
    from agentjobs.adapters.object_store import ObjectStore, StorageNotConfigured, StorageSettings
    from agentjobs.console import access, server
    from agentjobs.console.context import Console

    try:
        store: ObjectStore | None = ObjectStore(StorageSettings.from_environment())
    except StorageNotConfigured:
        print(
            "agentjobs: no AGENTJOBS_S3_ENDPOINT: stored transcripts and artifacts are not shown",
            file=sys.stderr,
        )
        store = None
    kube = await Kube.connect(args.kubeconfig)
    try:
        checks: access.Access = (
            access.UserTokens(kube) if args.user_tokens else access.OwnKubeconfig(kube)
        )
        host, port = args.listen
        print(f"agentjobs console on http://{host}:{port}/", file=sys.stderr, flush=True)
        await server.serve(Console(checks, store, args.user_tokens), host=host, port=port)
    finally:
        await kube.close()


def run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))
    return 0
