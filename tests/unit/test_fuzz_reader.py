"""The reader's fuzzing harness (benchmarks/fuzz_reader.py) at CI size.

Cases: for each transcript format, a few thousand fuzzed transcripts (seeded, so a
failure repeats) let no exception escape the reader, and what it says validates and
serialises as a status; the harness notices a reader that lets a terminal control
through, so it can fail.
"""

from __future__ import annotations

import pytest

from agentjobs.contract.text import agent_text
from agentjobs.models.contract import TranscriptFormat
from benchmarks import fuzz_reader

INPUTS = 2000


@pytest.fixture(scope="module")
def seeds() -> fuzz_reader.Seeds:
    return fuzz_reader.Seeds()


@pytest.mark.parametrize("transcript_format", list(TranscriptFormat))
def test_no_exception_escapes_the_reader(
    transcript_format: TranscriptFormat, seeds: fuzz_reader.Seeds
) -> None:
    counts = fuzz_reader.fuzz(
        transcript_format, inputs=INPUTS, seed=21, seeds=seeds, crash_dir=None, deep_every=2
    )
    assert counts.inputs == INPUTS
    assert counts.escapes == 0
    assert set(counts.reports) >= {"success", "failure", "unreadable", "not_reported"}


def test_the_harness_notices_a_terminal_control_let_through(
    seeds: fuzz_reader.Seeds, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_text, "cleaned", lambda model: model)
    counts = fuzz_reader.fuzz(
        TranscriptFormat.TEXT, inputs=500, seed=21, seeds=seeds, crash_dir=None
    )
    assert counts.escapes > 0
