"""How long every retry loop of the operator and its sidecars waits before the next try.

Waits double from a first one up to a cap, and each is jittered down to as little as half
its length, so that a thousand runners that met one outage (the API server restarting,
storage down) do not all come back in the same instant. The contract's own waits, a
retried attempt's (R45) and a webhook's (R51), are recorded in status and not jittered;
they are not here.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# A wait is drawn between (1 - JITTER) and all of its nominal length.
JITTER = 0.5
Draw = Callable[[], float]


@dataclass(frozen=True)
class Backoff:
    """Nominal waits ``first``, ``2 * first``, ... up to ``cap`` seconds."""

    first: float
    cap: float

    def nominal(self, retry: int) -> float:
        """The wait before try ``retry + 1`` (``retry`` from 0), before its jitter."""
        return min(self.first * 2.0 ** min(retry, 64), self.cap)

    def delay(self, retry: int, *, draw: Draw = random.random) -> float:
        """The jittered wait before try ``retry + 1``; ``draw`` gives a number in [0, 1)."""
        return self.nominal(retry) * (1.0 - JITTER * draw())

    def delays(self, *, draw: Draw = random.random) -> Iterator[float]:
        """The jittered waits of one retry loop, in order, for as long as it asks."""
        retry = 0
        while True:
            yield self.delay(retry, draw=draw)
            retry += 1


# The API server: the runners, the reconciler, the resync, stopping and releasing pods.
API = Backoff(first=1.0, cap=60.0)
# The object store, from the operator (a thousand phases' transcripts) and the fetcher.
STORAGE = Backoff(first=0.5, cap=10.0)
# The harvester's syncs: the phase waits on its last one, so it tries again sooner.
HARVEST = Backoff(first=0.5, cap=5.0)
# A terminated agent's last log read, tried a few times (the kubelet may lag behind).
FINAL_LOG_READ = Backoff(first=0.5, cap=8.0)
