"""The operator's collector settings: what its start made is frozen, and collections of
the older generations come far apart (a full one ran every 3 s with 1,000 phases)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from agentjobs.runtime import garbage_collection


@pytest.fixture
def restored() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored")
def test_tune_freezes_what_exists_and_spaces_the_collections_out() -> None:
    gc.unfreeze()
    kept: list[list[str]] = [[]]  # tracked by the collector
    garbage_collection.tune()
    assert gc.get_freeze_count() > 0
    young, middle, oldest = gc.get_threshold()
    assert young >= 50_000 and young * middle * oldest >= 10**8
    assert all(found is not kept for found in gc.get_objects())  # frozen: never scanned
