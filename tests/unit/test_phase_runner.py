"""The phase runner end to end against an in-memory API server, its pods moved by the test.

Cases: a Phase cancelled before its pod was made ends cancelled and makes none; an agent
that reports success and exits 0 completes the phase, its report and run facts checkpointed
and its pod released; a cancel while the pod waits to start deletes the pod and ends the
phase cancelled, not interrupted (R22 over R22a); an eviction after the agent's start ends
it interrupted (R22a); a pod the operator did not delete, gone before it started, ends the
phase interrupted. The pod the runner has just made is taken as its creation returned it
until a pod event wakes the runner, and asked for again after a while without one. Without
storage the run's facts go in the next write (the end, or a retry's), and the pod only
after it. The attempt's running status is written once its agent has started: with the
log's first checkpoint, or alone after a while of silence. A wake that comes while the
runner is busy is kept for its next wait, the stopper waiting beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.contract.phase import phase_status
from agentjobs.controllers.phase import phase_context, phase_log, pod_wait
from agentjobs.controllers.phase.phase_runner import PhaseRunner
from agentjobs.kube import naming
from agentjobs.models.resources import ExecutionSpec
from agentjobs.runtime import events
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.observed import Observed
from tests import builders
from tests.memory_kube import MemoryKube

NAMESPACE = "team"
PHASE = "demo-0-fix"
POD = paths.pod(NAMESPACE, naming.pod(PHASE, 1))
STARTED = "2026-12-01T09:00:00Z"


@pytest.fixture(autouse=True)
def posted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The Events the runner posts, by reason (no kopf here to post them)."""
    reasons: list[str] = []

    def post(body: dict[str, Any], *, reason: str, message: str, warning: bool = False) -> None:
        reasons.append(reason)

    monkeypatch.setattr(events, "post", post)
    yield reasons


def phase_in(kube: MemoryKube, **spec: Any) -> None:
    execution = ExecutionSpec.model_validate(
        {"phases": [{"name": "fix", "image": "busybox", "prompt": "Fix it."}]}
    )
    manifest = phase_status.phase_manifest(
        execution,
        namespace=NAMESPACE,
        execution_name="demo",
        execution_uid="execution-uid",
        index=0,
        inputs=None,
    )
    manifest["spec"].update(spec)
    kube.put(paths.phase(NAMESPACE, PHASE), manifest)


def runner_of(kube: MemoryKube) -> PhaseRunner:
    observed = Observed(executions={}, phases={}, pods={})
    return PhaseRunner(kube, OperatorConfig(), None, observed, namespace=NAMESPACE, name=PHASE)  # type: ignore[arg-type]


def status(kube: MemoryKube) -> dict[str, Any]:
    found: dict[str, Any] = kube.objects[paths.phase(NAMESPACE, PHASE)].get("status", {})
    return found


async def until(check: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def agent(state: dict[str, Any], **pod_status: Any) -> dict[str, Any]:
    return {"containerStatuses": [{"name": "agent", "state": state}], **pod_status}


def report_and_exit(kube: MemoryKube, runner: PhaseRunner, pod: str = POD) -> None:
    """The agent prints a report and exits 0; the runner is woken as the pod watch would."""
    kube.logs[pod, "agent"] = f"{builders.block(builders.report())}\n".encode()
    ended = {"terminated": {"exitCode": 0, "startedAt": STARTED, "finishedAt": STARTED}}
    kube.set_pod_status(pod, agent(ended, phase="Succeeded"))
    runner.notify()


def run_with(kube: MemoryKube, act: Callable[[PhaseRunner], Any]) -> None:
    """Run the phase while ``act`` moves its pod, waking the runner as the pod watch would."""

    async def main() -> None:
        runner = runner_of(kube)
        task = asyncio.create_task(runner.run())
        await until(lambda: POD in kube.objects, "the pod is made")
        await act(runner)
        await asyncio.wait_for(task, timeout=10)

    asyncio.run(main())


def test_a_phase_cancelled_before_its_pod_ends_cancelled_and_makes_none() -> None:
    kube = MemoryKube()
    phase_in(kube, cancel=True)
    asyncio.run(runner_of(kube).run())
    assert status(kube)["status"] == "cancelled"
    assert ("POST", paths.pod(NAMESPACE)) not in kube.requests


def test_an_agent_that_reports_success_and_exits_0_completes_the_phase(
    posted: list[str],
) -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def finish(runner: PhaseRunner) -> None:
        kube.logs[POD, "agent"] = b"fixed the parser\n"
        kube.set_pod_status(POD, agent({"running": {"startedAt": STARTED}}, phase="Running"))
        runner.notify()
        await until(lambda: bool(kube.patches), "the first bytes are checkpointed")
        kube.logs[POD, "agent"] += f"{builders.block(builders.report())}\n".encode()
        ended = {"terminated": {"exitCode": 0, "startedAt": STARTED, "finishedAt": STARTED}}
        kube.set_pod_status(POD, agent(ended, phase="Succeeded"))
        runner.notify()

    run_with(kube, finish)
    ended = status(kube)
    assert (ended["status"], ended["exitCode"], ended["streamIntact"]) == ("completed", 0, True)
    assert ended["report"]["state"] == "success"
    assert ended["run"]["transcriptBytes"] == len(kube.logs[POD, "agent"])
    # The report read mid-stream is told by the end: it costs no write or Event of its own.
    assert [p["status"]["status"] for p in kube.patches] == ["running", "completed"]
    assert posted == ["Running", "Complete"]
    assert ("UNFINALIZE", POD) in kube.requests  # released once its run was recorded


def test_a_cancel_while_the_pod_waits_to_start_ends_it_cancelled_not_interrupted() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def cancel(runner: PhaseRunner) -> None:
        waiting = {"waiting": {"reason": "ContainerCreating"}}
        kube.set_pod_status(POD, agent(waiting, phase="Pending"))
        runner.notify(cancel=True)

    run_with(kube, cancel)
    ended = status(kube)
    assert ended["status"] == "cancelled"
    assert ended["run"]["cancelled"] and not ended["run"]["interrupted"]
    assert ("DELETE", POD) in kube.requests


def test_an_eviction_after_the_agent_started_interrupts_the_phase() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def evict(runner: PhaseRunner) -> None:
        kube.logs[POD, "agent"] = b"working\n"
        killed = {"terminated": {"exitCode": 137, "startedAt": STARTED, "finishedAt": STARTED}}
        kube.set_pod_status(
            POD, agent(killed, phase="Failed", reason="Evicted", message="low on memory")
        )
        runner.notify()

    run_with(kube, evict)
    ended = status(kube)
    assert (ended["status"], ended["run"]["systemFailure"]["code"]) == ("interrupted", "Evicted")


def test_a_pod_deleted_by_someone_else_before_it_started_interrupts_the_phase() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def remove(runner: PhaseRunner) -> None:
        del kube.objects[POD]
        runner.notify()

    run_with(kube, remove)
    ended = status(kube)
    assert ended["status"] == "interrupted"
    assert ended["run"]["interrupted"] and not ended["run"]["cancelled"]


def test_the_pod_it_has_just_made_is_not_read_back_before_the_watch_shows_it() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def finish(runner: PhaseRunner) -> None:
        await asyncio.sleep(0.2)  # the runner waits for its pod's start meanwhile
        assert ("GET", POD) not in kube.requests
        report_and_exit(kube, runner)

    run_with(kube, finish)
    assert status(kube)["status"] == "completed"
    assert ("GET", POD) in kube.requests  # once woken, as the pod is now


def test_a_pod_made_and_gone_without_an_event_is_read_again_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(phase_context, "CREATED_POD_SECONDS", 0.1)
    monkeypatch.setattr(pod_wait, "RECHECK_SECONDS", 0.05)
    kube = MemoryKube()
    phase_in(kube)

    async def remove_silently(runner: PhaseRunner) -> None:
        del kube.objects[POD]

    run_with(kube, remove_silently)
    assert status(kube)["status"] == "interrupted"


def test_without_storage_the_end_write_records_the_run_and_then_lets_the_pod_go() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def finish(runner: PhaseRunner) -> None:
        report_and_exit(kube, runner)

    run_with(kube, finish)
    status_path = paths.status(paths.phase(NAMESPACE, PHASE))
    writes = [i for i, request in enumerate(kube.requests) if request == ("PATCH", status_path)]
    # The pod made with the log's first bytes, the end: the run's facts come with the end.
    assert [p["status"]["status"] for p in kube.patches] == ["running", "completed"]
    assert {"podName", "attempt", "log"} <= kube.patches[0]["status"].keys()
    assert ["run" in p["status"] for p in kube.patches] == [False, True]
    assert kube.requests.index(("UNFINALIZE", POD)) > writes[-1]


def test_the_running_status_waits_for_the_agents_start() -> None:
    kube = MemoryKube()
    phase_in(kube)

    async def start_late(runner: PhaseRunner) -> None:
        waiting = {"waiting": {"reason": "ContainerCreating"}}
        kube.set_pod_status(POD, agent(waiting, phase="Pending"))
        runner.notify()
        await asyncio.sleep(0.3)
        assert kube.patches == []  # nothing to show yet: the pod is made, its agent not started
        report_and_exit(kube, runner)

    run_with(kube, start_late)
    assert [p["status"]["status"] for p in kube.patches] == ["running", "completed"]


def test_a_silent_agent_is_shown_running_after_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phase_log, "SILENT_START_SECONDS", 0.05)
    kube = MemoryKube()
    phase_in(kube)

    async def stay_silent_then_finish(runner: PhaseRunner) -> None:
        running = {"running": {"startedAt": STARTED}}
        kube.set_pod_status(POD, agent(running, phase="Running"))
        runner.notify()
        await until(lambda: bool(kube.patches), "the running status is written")
        assert kube.patches[0]["status"]["podName"] == naming.pod(PHASE, 1)
        assert "log" not in kube.patches[0]["status"]  # written without a checkpoint
        report_and_exit(kube, runner)

    run_with(kube, stay_silent_then_finish)
    assert status(kube)["status"] == "completed"


def test_without_storage_a_retried_attempts_pod_goes_after_the_retrying_write() -> None:
    kube = MemoryKube()
    phase_in(kube, retry={"limit": 1, "on": ["interrupted"], "backoffSeconds": 0})
    second = paths.pod(NAMESPACE, naming.pod(PHASE, 2))

    async def evict_then_finish(runner: PhaseRunner) -> None:
        killed = {"terminated": {"exitCode": 137, "startedAt": STARTED, "finishedAt": STARTED}}
        kube.set_pod_status(POD, agent(killed, phase="Failed", reason="Evicted", message="low"))
        runner.notify()
        await until(lambda: second in kube.objects, "the second attempt's pod is made")
        report_and_exit(kube, runner, second)

    run_with(kube, evict_then_finish)
    assert status(kube)["status"] == "completed"
    release = kube.requests.index(("UNFINALIZE", POD))
    written = [request for request in kube.requests[:release] if request[0] == "PATCH"]
    assert kube.patches[len(written) - 1]["status"]["attempt"] == 2  # the retrying write


def test_a_wake_while_the_runner_is_busy_is_kept_for_its_next_wait() -> None:
    # The pod ends while the runner writes a status (no one waits on `changed`); the stopper,
    # which waits for a stop request meanwhile, must not take the wake the runner needs.
    kube = MemoryKube()
    phase_in(kube)
    body = kube.objects[paths.phase(NAMESPACE, PHASE)]
    observed = Observed(executions={}, phases={}, pods={})  # type: ignore[arg-type]

    async def main() -> float:
        ctx = phase_context.PhaseContext(kube, OperatorConfig(), None, observed, body)  # type: ignore[arg-type]
        stopper = asyncio.create_task(pod_wait.stop_when_requested(ctx, naming.pod(PHASE, 1)))
        await asyncio.sleep(0.01)  # the stopper waits
        ctx.wake()
        await asyncio.sleep(0.01)  # it has run since
        started = asyncio.get_running_loop().time()
        await ctx.wait(2.0)
        waited = asyncio.get_running_loop().time() - started
        assert not stopper.done()  # no stop was requested: the pod stays
        stopper.cancel()
        await asyncio.gather(stopper, return_exceptions=True)
        return waited

    assert asyncio.run(main()) < 0.5
