"""What every stage of a phase's run shares: the Phase as last read, its status writes,
and its pod, found by the Phase's UID."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from agentjobs.adapters import paths
from agentjobs.adapters.kube import JsonObject, Kube
from agentjobs.contract.outcome import status_budget
from agentjobs.contract.phase import phase_core, phase_status
from agentjobs.controllers.phase import pod_release
from agentjobs.kube import conditions, naming, ownership, pod_state
from agentjobs.kube.status_patch import status_patch
from agentjobs.models.contract import SystemFailure
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.resources import PhaseSpec
from agentjobs.runtime import errors, events
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.observed import Observed, without_managed_fields
from agentjobs.services.phase_storage import PhaseStorage

# How long a pod's creation answer stands in for it while the pod watch has not shown it:
# its first event comes within milliseconds, and past this a GET says whether it is there.
CREATED_POD_SECONDS = 5.0


@dataclass(frozen=True)
class Attempt:
    """One run of the phase's pod: its name and where its artifacts go."""

    pod_name: str
    number: int
    bucket: str | None = None
    root: str | None = None


class PhaseContext:
    """One Phase being run; ``notify`` wakes whoever waits on its pod."""

    def __init__(
        self,
        kube: Kube,
        config: OperatorConfig,
        storage: PhaseStorage | None,
        observed: Observed,
        body: JsonObject,
    ) -> None:
        self.kube = kube
        self._observed = observed
        self.config = config
        self.storage = storage
        # Kept for the run's length, for its Events and spec: without the managedFields.
        self.body = without_managed_fields(body)
        self.namespace: str = body["metadata"]["namespace"]
        self.name: str = body["metadata"]["name"]
        self.uid: str = body["metadata"]["uid"]
        self.spec = PhaseSpec.model_validate(body["spec"])
        self.status = PhaseResourceStatus.model_validate(body.get("status") or {})
        # As last written: ``status`` runs ahead of it only while a held status waits for the
        # next write (:meth:`hold`, :meth:`hold_run`), with the pod that write may let go.
        self._written = self.status
        self._release_when_written: str | None = None
        self.changed = asyncio.Event()
        # The stopper's wake (:meth:`until_stop_requested`). On ``changed`` it cleared wakes the
        # runner had not seen yet: a pod that ended during a status write was waited on for
        # the full recheck, 2 s.
        self._stop_wake = asyncio.Event()
        self.stops = phase_core.Stops(cancel=self.spec.cancel, interrupt=self.spec.interrupt)
        self.deleted_by_operator = False
        # When this process read the agent's log to its end (time.monotonic), for metrics.
        self.agent_ended_at: float | None = None
        self._generation: int | None = body["metadata"].get("generation")
        # The pod this runner created, as the API server returned it, until the pod watch
        # wakes the runner: until then the watch does not show it (at 1,000 phases at once,
        # reading it instead cost 0.57 GETs a phase).
        self._created_pod: JsonObject | None = None
        self._created_at = 0.0

    @property
    def generation(self) -> int | None:
        """The generation whose spec the runner acts on, recorded as observedGeneration."""
        return self._generation

    def observe_generation(self, generation: int | None) -> None:
        """A later spec (a cancel or an interrupt) was seen: statuses from now on say so, or
        kstatus and Argo CD would wait for ever for the operator to observe it."""
        if generation is not None and (self._generation is None or generation > self._generation):
            self._generation = generation

    def attempt(self, number: int) -> Attempt:
        pod_name = naming.pod(self.name, number)
        if self.storage is None:
            return Attempt(pod_name, number)
        return Attempt(
            pod_name,
            number,
            bucket=self.storage.bucket(self.spec),
            root=self.storage.attempt_root(self.spec, namespace=self.namespace, attempt=number),
        )

    async def wait(self, seconds: float | None) -> None:
        """Until the pod or the Phase changes, or ``seconds`` have passed (None: until it
        changes)."""
        if seconds is None:
            await self.changed.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=max(seconds, 0.05))
        self.changed.clear()

    def wake(self) -> None:
        """The phase's pod or its spec changed: what the watch shows is newer than any
        creation answer."""
        self._created_pod = None
        self.changed.set()
        self._stop_wake.set()

    async def until_stop_requested(self) -> None:
        """Until the phase is told to stop (cancelled or interrupted); ``notify`` sets the
        request before it wakes."""
        while not self.stops.requested:
            await self._stop_wake.wait()
            self._stop_wake.clear()

    def pod_created(self, pod: JsonObject) -> None:
        """``pod`` was just created by this runner, as the API server returned it."""
        self._created_pod = pod
        self._created_at = time.monotonic()

    async def current_pod(self, pod_name: str) -> JsonObject | None:
        """The phase's pod; a pod of that name that another owner left behind is not it. As
        the pod watch last showed it; only a pod it does not show (not yet, or no more) is
        asked for. A pod this runner has just created is as its creation returned it until the
        watch shows it: nothing can have moved it further without an event that wakes us."""
        pod = self._observed.pod(self.namespace, pod_name) or self._just_created(pod_name)
        if pod is None:
            pod = await self.kube.get(paths.pod(self.namespace, pod_name))
        return pod if pod is not None and ownership.owned_by(pod, self.uid) else None

    def _just_created(self, pod_name: str) -> JsonObject | None:
        created = self._created_pod
        if created is None or created["metadata"]["name"] != pod_name:
            return None
        if time.monotonic() - self._created_at > CREATED_POD_SECONDS:
            self._created_pod = None
            return None
        return created

    def interruption(
        self, pod: JsonObject, agent: pod_state.AgentState | None = None
    ) -> SystemFailure | None:
        """R22a from the pod's own signals (:func:`phase_core.interruption`)."""
        return phase_core.interruption(
            pod, self.stops, deleted_by_operator=self.deleted_by_operator, agent=agent
        )

    async def write_status(self, status: PhaseResourceStatus) -> bool:
        """Write ``status`` fitted to its budget (R57; nothing when it is unchanged); False
        when the Phase is gone. What is written is ``self.status`` from then on, and a pod
        whose run it records (:meth:`hold_run`) may go."""
        status = status_budget.fit_phase(status)
        patch = status_patch(status, self._written)
        if patch is not None:
            # The Phase's spec may leave its status less room than the budget: refused for
            # its size, it is written squeezed as far as it goes, once.
            patched, status = await errors.write_status(
                self.kube,
                paths.status(paths.phase(self.namespace, self.name)),
                patch,
                status,
                self._written,
                squeeze=lambda full: status_budget.fit_phase(full, budget=0),
            )
            if patched is None:
                return False
            events.post_condition_changes(self.body, self._written.conditions, status.conditions)
        self.status = self._written = status
        held, self._release_when_written = self._release_when_written, None
        if held is not None:
            await self.release_pod(held)
        return True

    def hold(self, status: PhaseResourceStatus) -> None:
        """Take ``status`` as the phase's without writing it, fitted to its budget as a write
        would be (R57): the phase's next write carries it."""
        self.status = status_budget.fit_phase(status)

    @property
    def holds(self) -> bool:
        """A held status waits for the next write."""
        return self.status is not self._written

    def hold_run(self, status: PhaseResourceStatus, *, pod_name: str) -> None:
        """:meth:`hold` ``status`` (the run's facts added): the phase's next write, which
        follows at once, carries it and then lets ``pod_name`` go."""
        self.hold(status)
        self._release_when_written = pod_name

    async def release_pod(self, pod_name: str) -> None:
        """The pod's run is recorded: it may go whenever it is deleted."""
        pod = await self.current_pod(pod_name)
        if pod is not None:
            await pod_release.release(self.kube, pod)

    async def show_gates(self, pod_name: str, gates: tuple[str, ...]) -> None:
        """R73: ``Queued`` while scheduling gates hold the pod, and no longer once they are
        gone (from then the pending timeout counts)."""
        queued = conditions.is_true(self.status.conditions, conditions.QUEUED)
        if not gates and not queued:
            return
        if gates:
            reason = "SchedulingGated"
            message = f"{pod_name} waits for its scheduling gates: {', '.join(gates)}"
        else:
            reason, message = "Ungated", f"{pod_name}'s scheduling gates were removed"
        status = self.status.model_copy(
            update={
                "conditions": conditions.with_condition(
                    self.status.conditions,
                    conditions.QUEUED,
                    true=bool(gates),
                    reason=reason,
                    message=message,
                    generation=self.generation,
                    now=datetime.now(UTC),
                )
            }
        )
        await self.write_status(status)

    async def report_waiting(self, message: str) -> None:
        """Show why the phase is not moving (storage down, harvester retrying) in its status."""
        status = self.status
        current = next((c.message for c in status.conditions if c.type == "Running"), None)
        if status.status is None or phase_status.is_terminal(status):
            return
        if current == message or status.pod_name is None:
            return
        await self.write_status(
            phase_status.running(
                status,
                pod_name=status.pod_name,
                attempt=status.attempt or 1,
                message=message,
                generation=self.generation,
                now=datetime.now(UTC),
            )
        )
