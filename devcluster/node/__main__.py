"""`python -m devcluster.node`: run the process node until SIGTERM/SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from pathlib import Path

from . import eviction
from .api import ApiError, KubeApi
from .config import NodeConfig, parse_duration, parse_size
from .images import ImageTableFiles
from .node import Node
from .server import server_ssl_context, start_server

log = logging.getLogger("devcluster.node")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m devcluster.node", description="A process node standing in for the kubelet."
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--node-name", default="devnode")
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=10250)
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    parser.add_argument("--client-ca", required=True)
    parser.add_argument("--state-dir", required=True, type=Path)
    parser.add_argument(
        "--images",
        action="append",
        type=Path,
        default=[],
        help="image table YAML; repeat to extend (later files win)",
    )
    defaults = NodeConfig()
    parser.add_argument(
        "--restart-backoff",
        type=float,
        default=defaults.restart_backoff,
        help="first crash-loop back-off in seconds (the kubelet's is 10)",
    )
    parser.add_argument(
        "--node-lease-duration-seconds",
        type=int,
        default=defaults.node_lease_duration_seconds,
        help="the Lease's duration; it is renewed every quarter of it (kubelet default 40)",
    )
    parser.add_argument(
        "--container-log-max-size",
        type=parse_size,
        default=defaults.container_log_max_size,
        help="rotate a container's log when it reaches this size, e.g. 10Mi (the default)",
    )
    parser.add_argument(
        "--container-log-max-files",
        type=int,
        default=defaults.container_log_max_files,
        help="log files kept per container, the current one included (default 5)",
    )
    parser.add_argument(
        "--container-log-monitor-interval",
        type=parse_duration,
        default=defaults.container_log_monitor_interval,
        help="how often log sizes are checked, e.g. 10s (the default)",
    )
    parser.add_argument(
        "--streaming-connection-idle-timeout",
        type=parse_duration,
        default=defaults.streaming_connection_idle_timeout,
        help="close a log follow stream idle this long, e.g. 4h (the default)",
    )
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    api = await KubeApi.from_kubeconfig(args.kubeconfig)
    try:
        node = Node(
            api,
            args.node_name,
            args.address,
            args.port,
            args.state_dir.resolve(),
            ImageTableFiles(args.images),
            NodeConfig(
                node_lease_duration_seconds=args.node_lease_duration_seconds,
                container_log_max_size=args.container_log_max_size,
                container_log_max_files=args.container_log_max_files,
                container_log_monitor_interval=args.container_log_monitor_interval,
                streaming_connection_idle_timeout=args.streaming_connection_idle_timeout,
                restart_backoff=args.restart_backoff,
            ),
        )
        context = server_ssl_context(args.tls_cert, args.tls_key, args.client_ca)
        runner = await start_server(node, args.address, args.port, context)
        while True:
            try:
                await node.heartbeat.register()
                break
            except (ApiError, OSError) as error:
                log.warning("cannot register the node yet: %s", error)
                await asyncio.sleep(1)
        log.info("node %s registered; serving on %s:%s", args.node_name, args.address, args.port)
        tasks = [
            asyncio.create_task(node.heartbeat.loop()),
            asyncio.create_task(node.watch_pods()),
            asyncio.create_task(node.ctx.logs.loop(args.container_log_monitor_interval)),
            asyncio.create_task(eviction.loop(node.workers, eviction.MONITORING_PERIOD_SECONDS)),
        ]
        await stop.wait()
        log.info("stopping: killing containers")
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await node.shutdown()
        log.info("containers stopped")
        await runner.cleanup()
        log.info("stopped")
    finally:
        await api.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
