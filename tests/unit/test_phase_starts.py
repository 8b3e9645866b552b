"""How long an Execution's status waits for a Phase it has just created (no cluster).

Cases: a Phase created and still without a status is waited for until GRACE after its
creation, and no longer; one that shows a status is not waited for, nor asked about again;
a Phase nobody created here is never waited for; several Phases wait until the latest; waits
past their end are forgotten when the next Phase is created.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentjobs.contract.execution.phase_starts import GRACE, PhaseStarts

T0 = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
MS = timedelta(milliseconds=1)


def test_a_phase_without_a_status_is_waited_for_until_grace_after_its_creation() -> None:
    starts = PhaseStarts()
    starts.created("team", "fix-0-run", now=T0)
    assert starts.wait_until("team", [("fix-0-run", False)], now=T0 + 10 * MS) == T0 + GRACE
    assert starts.wait_until("team", [("fix-0-run", False)], now=T0 + GRACE) is None
    # Once past, it is not waited for again.
    assert starts.wait_until("team", [("fix-0-run", False)], now=T0 + 10 * MS) is None


def test_a_phase_with_a_status_is_not_waited_for_nor_again() -> None:
    starts = PhaseStarts()
    starts.created("team", "fix-0-run", now=T0)
    assert starts.wait_until("team", [("fix-0-run", True)], now=T0 + MS) is None
    assert starts.wait_until("team", [("fix-0-run", False)], now=T0 + 2 * MS) is None


def test_only_phases_created_here_and_in_that_namespace_are_waited_for() -> None:
    starts = PhaseStarts()
    starts.created("team", "fix-0-run", now=T0)
    assert starts.wait_until("other", [("fix-0-run", False)], now=T0 + MS) is None
    assert starts.wait_until("team", [("fix-1-check", False)], now=T0 + MS) is None
    assert starts.wait_until("team", [("fix-0-run", False)], now=T0 + MS) == T0 + GRACE


def test_several_phases_wait_until_the_latest() -> None:
    starts = PhaseStarts()
    starts.created("team", "a-0-run", now=T0)
    starts.created("team", "b-0-run", now=T0 + 300 * MS)
    waiting = [("a-0-run", False), ("b-0-run", False)]
    assert starts.wait_until("team", waiting, now=T0 + 400 * MS) == T0 + 300 * MS + GRACE


def test_waits_past_their_end_are_forgotten_when_the_next_phase_is_created() -> None:
    starts = PhaseStarts()
    starts.created("team", "gone-0-run", now=T0)
    starts.created("team", "fix-0-run", now=T0 + GRACE + MS)
    # Had it been kept, the old entry would still be asked about; it is gone.
    assert starts.wait_until("team", [("gone-0-run", False)], now=T0 + MS) is None
