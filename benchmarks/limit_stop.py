"""How soon a limit stops an agent (R70), on the local cluster's real node: from the event
that passes the limit to the SIGTERM the agent gets, median and p95 over N runs.

Runs N one-phase Executions (default 20), ``--batch`` at a time, each a Claude Code-shaped
agent printing one message of 1,100 tokens a second under a ``maxTokens`` that its
``--message``-th message passes. Both moments are the node's own clock (the container reads
/proc/uptime as it prints the message and as its SIGTERM trap runs), so neither the API's
second-grained timestamps nor the log's reading are in the figure. Needs a running cluster
(``python -m devcluster up``); the operator is started here.

    python -m benchmarks.limit_stop [--count 20] [--batch 4] [--message 6]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from benchmarks.real_node import start_operator
from devcluster import cluster
from devcluster.testing import Kubectl
from tests.integration.test_limits import claude_agent, execution, transcript

# The message of 1,100 tokens that passes the limit: the --message-th (by default the sixth,
# once the pod is all up: a stop in a run's first seconds waits for the kubelet to begin
# probing the agent, which it does only once the timekeeper, started after it, answers).
MESSAGE = 6


def limits(message: int) -> dict[str, int]:
    """A maxTokens that the ``message``-th message of 1,100 tokens passes."""
    return {"maxTokens": 1100 * message - 100}


def stop_latency(kubectl: Kubectl, namespace: str, name: str, message: int) -> float:
    printed = transcript(kubectl, namespace, f"{name}-0-work-a1")
    messages = [event for event in printed if event["type"] == "assistant"]
    [stopped] = [event for event in printed if event.get("subtype") == "stopped"]
    latency: float = stopped["at"] - messages[message - 1]["at"]
    return latency


def finished(kubectl: Kubectl, namespace: str, names: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for name in names:
        left = max(1, int(deadline - time.monotonic()))
        kubectl.run(
            "wait", "-n", namespace, "--for=condition=Finished", f"execution/{name}",
            f"--timeout={left}s", timeout=left + 10,
        )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--message", type=int, default=MESSAGE)
    args = parser.parse_args()
    os.environ.update(cluster.environment())
    kubectl = Kubectl(dict(os.environ))
    namespace = f"bench-{uuid.uuid4().hex[:6]}"
    kubectl.run("create", "namespace", namespace)
    operator = start_operator(namespace)
    latencies: list[float] = []
    try:
        names = [f"stop-{i:03d}" for i in range(args.count)]
        for start in range(0, len(names), args.batch):
            batch = names[start : start + args.batch]
            for name in batch:
                kubectl.apply(execution(name, claude_agent(), limits(args.message)), namespace)
            finished(kubectl, namespace, batch, timeout=180)
            latencies += [stop_latency(kubectl, namespace, name, args.message) for name in batch]
    finally:
        operator.terminate()
        operator.wait(timeout=30)
        kubectl.run("delete", "namespace", namespace, "--wait=false")
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(f"runs: {len(ordered)}, {args.batch} at a time, message {args.message} passing")
    print(f"event to SIGTERM: median {statistics.median(ordered):.2f} s, p95 {p95:.2f} s")
    print("each: " + " ".join(f"{value:.2f}" for value in ordered))


if __name__ == "__main__":
    main()
