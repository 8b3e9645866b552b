"""Run one Phase to its end: pod, live log, checkpoint, harvest, verdict.

One asyncio task per running Phase, never a thread. The phase core
(:mod:`agentjobs.contract.phase.phase_core`) says which step the Phase's status is at;
the stages live in their own modules: making the pod (:mod:`phase_pod`), one
pod's run from its start to its stored transcript, the agent's and a grader's
alike (:mod:`pod_run`, with :mod:`pod_wait` and :mod:`phase_log`), finishing
(:mod:`phase_finish`) and an outcome's grading and revisions
(:mod:`phase_outcome`); this module puts them in order.

Once the agent's log is read to its end, the transcript is stored and the
run's facts are checkpointed in the Phase's status before the harvest is
collected (without storage, nothing is: they go in the phase's next write,
which follows at once). The pod is let go only once they are written, so the
runner is safe to kill at any moment: a new one finishes from the
checkpoint (even without the pod), or, before it, finds the same pod by its
deterministic name and the Phase's UID and reads the log again, checking it
against the progress already recorded (R14). A phase with an outcome goes on
from attempt to attempt as its evaluations say, and a failed attempt is
followed by another as the phase's retry policy says (:mod:`phase_retry`).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Protocol

from agentjobs.adapters import log_records, metrics, paths
from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.contract.grading.revision import Revision
from agentjobs.contract.phase import operator_failure, phase_core, phase_status, run_checkpoint
from agentjobs.contract.phase.phase_core import Step
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.controllers.phase import (
    phase_finish,
    phase_log,
    phase_outcome,
    phase_pod,
    phase_retry,
    pod_release,
    pod_run,
    pod_wait,
)
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.kube import pods
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.runtime import backoff, errors
from agentjobs.runtime.config import OperatorConfig
from agentjobs.runtime.observed import Observed
from agentjobs.services.phase_storage import PhaseStorage

logger = logging.getLogger(__name__)


class Runnable(Protocol):
    namespace: str
    name: str

    async def run(self) -> None: ...

    async def give_up(self, error: Exception) -> None: ...


def _worth_retrying(error: Exception) -> bool:
    """A passing fault, or a permission the operator lacks: an admin grants it, and the
    phase goes on then (as before R55)."""
    return errors.transient(error) or (isinstance(error, ApiError) and error.forbidden)


async def run_to_end(runner: Runnable) -> None:
    """Run until the phase is resolved. A passing fault is retried with backoff; any other
    error ends the phase failed, once, instead of reading its log again for ever (R55)."""
    subject = f"phase {runner.namespace}/{runner.name}"
    delays = backoff.API.delays()
    failed: Exception | None = None
    while True:
        try:
            if failed is None:
                await runner.run()
            else:
                await runner.give_up(failed)
            return
        except Exception as error:  # sorted by _worth_retrying; the phase must still end
            if _worth_retrying(error):
                delay = next(delays)
                errors.log_retry(logger, subject, error, delay)
            elif failed is None:
                logger.error("%s: unexpected error; the phase ends failed", subject, exc_info=error)
                failed = error
                continue
            else:
                logger.error("%s: its failure could not be recorded", subject, exc_info=error)
                return
        await asyncio.sleep(delay)


class PhaseRunner:
    """Drives one Phase; ``notify`` wakes it when its pod or its spec changes."""

    def __init__(
        self,
        kube: Kube,
        config: OperatorConfig,
        storage: PhaseStorage | None,
        observed: Observed,
        *,
        namespace: str,
        name: str,
        current: JsonObject | None = None,
    ) -> None:
        self._kube = kube
        # The Phase as it is, when its event is known to show that: the first run starts
        # from it instead of a GET (every later one reads the Phase afresh).
        self._current = current
        self._observed = observed
        self._config = config
        self._storage = storage
        self.namespace = namespace
        self.name = name
        self._ctx: PhaseContext | None = None
        self._stops = phase_core.Stops()
        self._generation: int | None = None

    @property
    def phase_uid(self) -> str | None:
        """The UID of the Phase this runner drives, once it has read it."""
        return None if self._ctx is None else self._ctx.uid

    def notify(
        self, *, cancel: bool = False, interrupt: bool = False, generation: int | None = None
    ) -> None:
        """Wake the runner: its pod changed, or its Phase was told to stop (``cancel``) or
        its Execution interrupted (``interrupt``, R44) in spec ``generation``."""
        self._stops = self._stops.adding(cancel=cancel, interrupt=interrupt)
        self._generation = generation or self._generation
        if self._ctx is not None:
            self._ctx.stops = self._ctx.stops.adding(cancel=cancel, interrupt=interrupt)
            self._ctx.observe_generation(generation)
            self._ctx.wake()

    async def run(self) -> None:
        body, self._current = self._current, None
        if body is None:
            body = await self._kube.get(paths.phase(self.namespace, self.name))
        if body is None:
            return
        ctx = PhaseContext(self._kube, self._config, self._storage, self._observed, body)
        ctx.stops = ctx.stops.adding(cancel=self._stops.cancel, interrupt=self._stops.interrupt)
        ctx.observe_generation(self._generation)
        self._ctx = ctx
        fields = log_records.PhaseFields(ctx.namespace, ctx.spec.execution_name, ctx.spec.name)
        log_records.current_phase.set(fields)  # this task's lines, and its children's
        revision: Revision | None = None
        while (step := phase_core.next_step(ctx.status, phase_resource=ctx.name)) is not Step.ENDED:
            attempt = ctx.attempt(phase_core.attempt_number(ctx.status))
            fields.attempt = attempt.number
            if step is Step.GRADING:  # a restart while a grader ran
                revision = await phase_outcome.grade(ctx, attempt)
            else:
                concluded = await self._run_attempt(ctx, attempt, step, revision)
                ended = (
                    None
                    if concluded is None
                    else await phase_retry.after_attempt(ctx, attempt, concluded)
                )
                if ended is None:
                    return
                if ended.retried:  # the next attempt gets the same revision, if any
                    continue
                revision = await phase_outcome.after_attempt(ctx, attempt, ended.status)
            if revision is None:
                return

    async def give_up(self, error: Exception) -> None:
        """R55: end the phase failed (platform) with ``error`` and let its pods go."""
        ctx = self._ctx
        if ctx is None:  # the Phase could not even be read: there is no status to write
            raise error
        attempt = ctx.attempt(phase_core.attempt_number(ctx.status))
        status = operator_failure.failed_status(
            ctx.status,
            phase_name=ctx.spec.name,
            error=error,
            generation=ctx.generation,
            now=datetime.now(UTC),
        )
        await phase_finish.write_final(ctx, attempt, status)
        await pod_release.release_pods_of(ctx.kube, ctx.namespace, ctx.name, ctx.uid)

    async def _run_attempt(
        self, ctx: PhaseContext, attempt: Attempt, step: Step, revision: Revision | None
    ) -> PhaseResourceStatus | None:
        """Run one agent attempt to the status it alone gives; None when the Phase is gone."""
        if step is Step.CONCLUDING:
            assert ctx.status.run is not None
            run, verdict = run_checkpoint.restore(ctx.status.run)
            await pod_wait.settle(ctx, attempt.pod_name)
            await ctx.release_pod(attempt.pod_name)
            return await phase_finish.conclude(ctx, attempt, run, verdict)
        if step is Step.PREPARING:
            await phase_retry.wait_for_backoff(ctx, attempt)
            stopped = ctx.stops.requested
            failure = None
            if not stopped:
                revision = revision or phase_outcome.recorded_revision(ctx)
                failure = await phase_pod.create_pod(ctx, attempt, revision=revision)
            if stopped or failure is not None:
                facts = phase_core.not_started(ctx.stops, failure)
                unstarted: pod_run.PodRun[ReaderVerdict] = await pod_run.unstarted(
                    ctx, attempt.pod_name, facts, container=pods.AGENT_CONTAINER
                )
                return await self._judged(ctx, attempt, unstarted)
            message = f"pod {attempt.pod_name} runs the agent"
            logger.info("attempt %d: %s", attempt.number, message)
            # Written with the log's first checkpoint, soon after the agent starts (phase_log),
            # or with whatever the phase shows first: one write fewer. A restart before then
            # finds the pod by its name and owner, as one right after its creation did.
            ctx.hold(_running(ctx, attempt, message))
        ran = await pod_run.run_pod(
            ctx,
            attempt.pod_name,
            container=pods.AGENT_CONTAINER,
            reading=lambda: phase_log.agent_log(ctx, attempt.pod_name),
            transcript_at=attempt,
        )
        return await self._judged(ctx, attempt, ran)

    async def _judged(
        self, ctx: PhaseContext, attempt: Attempt, ran: pod_run.PodRun[ReaderVerdict]
    ) -> PhaseResourceStatus | None:
        """Checkpoint the run's facts, let the pod go, then collect and conclude."""
        ctx.agent_ended_at = ran.log_ended_at
        if ran.harvest_seconds is not None:
            metrics.harvest_lag.observe(ran.harvest_seconds)
        transcript = ran.transcript
        record = run_checkpoint.record(
            ran.run,
            ran.verdict,
            transcript_bytes=transcript.stored if transcript else 0,
            transcript_sha256=transcript.sha256 if transcript else "",
            transcript_truncated=transcript.truncated if transcript else False,
        )
        checkpointed = phase_status.with_run(ctx.status, record)
        if ctx.storage is None:
            # Nothing is collected before the phase's next write, so that write records the
            # run (one write a phase fewer); until it has, the pod is kept, and a restart
            # reads its log again.
            ctx.hold_run(checkpointed, pod_name=attempt.pod_name)
        else:
            if not await ctx.write_status(checkpointed):
                return None
            await ctx.release_pod(attempt.pod_name)
        # As written (cut to its budget, R57), so a restarted operator concludes the same.
        assert ctx.status.run is not None
        run, restored = run_checkpoint.restore(ctx.status.run)
        return await phase_finish.conclude(ctx, attempt, run, restored)


def _running(ctx: PhaseContext, attempt: Attempt, message: str) -> PhaseResourceStatus:
    return phase_status.running(
        ctx.status,
        pod_name=attempt.pod_name,
        attempt=attempt.number,
        message=message,
        generation=ctx.generation,
        now=datetime.now(UTC),
    )
