"""When a phase pod may lose the finalizer that keeps it until its run is recorded."""

from __future__ import annotations

from typing import Any

from agentjobs.contract.phase import pod_tracking
from agentjobs.kube import naming

PHASE_UID = "phase-uid"


def pod(name: str = "p-a1", *, owner: str = PHASE_UID, tracked: bool = True) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "ownerReferences": [{"uid": owner, "controller": True}],
            "finalizers": [naming.POD_FINALIZER, "other/keep"] if tracked else ["other/keep"],
        }
    }


def phase(**status: Any) -> dict[str, Any]:
    return {"metadata": {"uid": PHASE_UID}, "status": status}


def test_tracked_reads_only_its_own_finalizer() -> None:
    assert pod_tracking.tracked(pod())
    assert not pod_tracking.tracked(pod(tracked=False))
    assert not pod_tracking.tracked({"metadata": {}})


def test_a_pod_whose_phase_is_gone_or_another_is_released() -> None:
    assert pod_tracking.releasable(pod(), None)
    assert pod_tracking.releasable(pod(owner="an-older-phase"), phase(podName="p-a1"))


def test_a_pod_not_yet_recorded_is_kept() -> None:
    # The runner may have died between creating the pod and recording it.
    assert not pod_tracking.releasable(pod(), phase())
    assert not pod_tracking.releasable(pod(), phase(status="running", podName="p-a1"))


def test_a_pod_whose_run_is_recorded_or_phase_ended_is_released() -> None:
    run = {"streamIntact": True, "report": {"state": "not_reported"}, "transcriptBytes": 0}
    recorded = phase(status="running", podName="p-a1", run=run | {"transcriptSha256": ""})
    assert pod_tracking.releasable(pod(), recorded)
    assert pod_tracking.releasable(pod(), phase(status="completed", podName="p-a1"))


def test_a_pod_of_an_earlier_attempt_is_released() -> None:
    assert pod_tracking.releasable(pod("p-a1"), phase(status="running", podName="p-a2"))


def test_a_graceful_deletion_is_recorded_once_and_a_final_one_never() -> None:
    deleting = pod()
    deleting["metadata"] |= {
        "deletionTimestamp": "2026-12-01T10:00:00Z",
        "deletionGracePeriodSeconds": 3600,
    }
    assert pod_tracking.deletion_to_record(deleting) == "2026-12-01T09:00:00Z"
    deleting["metadata"]["annotations"] = {naming.ANNOTATION_DELETION_REQUESTED: "recorded"}
    assert pod_tracking.deletion_to_record(deleting) is None
    final = pod()
    final["metadata"] |= {
        "deletionTimestamp": "2026-12-01T10:00:00Z",
        "deletionGracePeriodSeconds": 0,
    }
    assert pod_tracking.deletion_to_record(final) is None  # the request time is gone
    assert pod_tracking.deletion_to_record(pod()) is None  # not being deleted
    untracked = pod(tracked=False)
    untracked["metadata"] |= {
        "deletionTimestamp": "2026-12-01T10:00:00Z",
        "deletionGracePeriodSeconds": 3600,
    }
    assert pod_tracking.deletion_to_record(untracked) is None


def test_a_pod_whose_phase_is_being_deleted_is_released() -> None:
    # A foreground deletion of the Phase waits for its pods: keeping them would deadlock.
    going = phase(status="running", podName="p-a1")
    going["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z"
    assert pod_tracking.releasable(pod(), going)
