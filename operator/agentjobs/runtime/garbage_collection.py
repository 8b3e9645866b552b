"""The cyclic garbage collector, set for an operator's heap.

Most of the operator's objects are kopf's watched objects and the runners' state: each
lives for seconds to minutes (until its object's next event, or its phase's end), long
enough to reach the oldest generation. With CPython's thresholds (700, 10, 10) a full
collection runs whenever a quarter more objects have reached it, so with 1,000 phases at
once it ran 29 times in 80 s, half a second each (15 s of pauses in a run of 37 CPU
seconds; these settings brought the run to 29). Reference counting frees those objects
anyway (they hold no cycles); the collector is needed only for the few that do.
"""

from __future__ import annotations

import gc

# Objects allocated between two collections of the youngest generation: each examines
# what is young once, so fewer, larger ones cost less in all and hold a few MiB more.
YOUNG = 50_000
# Collections of a generation between two of the next one's: a full collection comes
# after 20 x 100 young ones (100 million allocations; tens of minutes at full load).
MIDDLE = 20
OLDEST = 100


def tune() -> None:
    """Freeze what the operator's start made (its modules, classes and settings live as
    long as the process, so no collection looks at them again) and space the collections
    out."""
    gc.freeze()
    gc.set_threshold(YOUNG, MIDDLE, OLDEST)
