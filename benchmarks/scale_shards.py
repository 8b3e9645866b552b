"""benchmarks/scale.py's phases over R replicas, each owning a share: R = 1, 2, 4.

A share is a namespace: each replica is ``agentjobs run --namespace <share>
--leader-election agentjobs`` as the chart's ServiceAccount there, so it leads its share
through the chart's Lease in it. For
each R given, the N one-phase Executions are spread over R namespaces (Execution i in share
i mod R) and applied at once on the simulated nodes; it prints each run's figures, then each
R's total rate over the first R's and whether every phase ran exactly once (one pod each, no
second attempt). Last line::

    shards: R=1 rate=<p>/min x1.00 once=yes R=2 rate=<p>/min x<ratio> once=yes ...

    python -m benchmarks.scale_shards --phases 1000 --replicas 1,2,4
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks.scale import Run, arguments_parser, connect, describe, measure_phases


def shards_line(runs: dict[int, Run]) -> str:
    """Each replica count's rate over the first one's, and whether each phase ran once."""
    first = next(iter(runs.values()))
    return "shards: " + " ".join(
        f"R={replicas} rate={run.per_minute:.0f}/min x{run.per_minute / first.per_minute:.2f} "
        f"once={'yes' if run.pods == run.count and run.retried == 0 else 'NO'}"
        for replicas, run in runs.items()
    )


async def main_shards(count: int, run_seconds: float, log: Path, replicas: list[int]) -> None:
    kube = await connect()
    runs: dict[int, Run] = {}
    try:
        for shards in replicas:
            run, usage = await measure_phases(
                kube, count, run_seconds, log, shards=shards, leader_election=True
            )
            runs[shards] = run
            print(
                f"{shards} replica(s), a namespace each: "
                + describe("one-phase Executions", run)
                + f"; operators' CPU {usage.cpu_seconds:.1f} s",
                flush=True,
            )
    finally:
        await kube.close()
    print(shards_line(runs))


if __name__ == "__main__":
    parser = arguments_parser(
        __doc__.splitlines()[0], phases=1000, log_name="scale-shards-operators.log"
    )
    parser.add_argument(
        "--replicas", default="1,2,4", help="replica counts to run (default: %(default)s)"
    )
    arguments = parser.parse_args()
    replica_counts = [int(count) for count in arguments.replicas.split(",")]
    asyncio.run(
        main_shards(arguments.phases, arguments.run_seconds, arguments.operator_log, replica_counts)
    )
