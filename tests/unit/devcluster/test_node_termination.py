"""Grace periods as the kubelet computes them (calculateEffectiveGracePeriod, pod_workers.go).

Cases: the spec's grace when nothing asks for less, the deletion's grace, an override
(eviction) that is shorter, a grace that never grows back, the one-second floor and the
two-second floor of a container kill.
"""

from __future__ import annotations

from typing import Any

from devcluster.node.termination import effective_grace, kill_deadline

Obj = dict[str, Any]


def _pod(spec_grace: int | None = None, deletion_grace: int | None = None) -> Obj:
    meta: Obj = {"name": "p", "namespace": "ns", "uid": "u"}
    if deletion_grace is not None:
        meta["deletionGracePeriodSeconds"] = deletion_grace
    spec: Obj = {"containers": []}
    if spec_grace is not None:
        spec["terminationGracePeriodSeconds"] = spec_grace
    return {"metadata": meta, "spec": spec}


def test_the_spec_grace_applies_when_nothing_asks_for_less() -> None:
    assert effective_grace(None, _pod(spec_grace=7), None) == 7
    assert effective_grace(None, _pod(), None) == 30


def test_the_deletion_grace_wins_over_the_spec() -> None:
    assert effective_grace(None, _pod(spec_grace=30, deletion_grace=4), None) == 4


def test_an_eviction_override_shortens_the_grace() -> None:
    assert effective_grace(None, _pod(spec_grace=30), 1) == 1


def test_a_grace_period_only_ever_shrinks() -> None:
    assert effective_grace(3, _pod(spec_grace=30, deletion_grace=10), None) == 3
    assert effective_grace(10, _pod(deletion_grace=2), None) == 2


def test_zero_grace_becomes_one_second_and_a_kill_waits_at_least_two() -> None:
    assert effective_grace(None, _pod(deletion_grace=0), None) == 1
    assert kill_deadline(100.0, 1.0) == 102.0
    assert kill_deadline(100.0, 5.0) == 105.0
