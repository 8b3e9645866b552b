"""Reading a phase's agent (or grader) log live, to its proven end, and the run's facts.

The log is fed to the streaming reader as it arrives and spooled as the
transcript. Progress is checkpointed in the Phase's status when the first
bytes arrive (with the attempt's running status, held until then, or written
alone after SILENT_START_SECONDS), so that a restarted operator can prove the
log it re-reads still begins with those bytes. Between streams the pod's own
signals are read:
a deletion the operator did not ask for, a disruption, an eviction or a lost
node interrupt the run (R22a). Once the agent has terminated a last,
non-following read takes the log to its end; only then is it whole (R14).

With limits set (R70) the agent's log is watched as it is read (:mod:`limit_guard`).

The same reading serves a grader's pod (R39) with a :class:`GradeReader`: its
progress is not checkpointed (a restarted operator reads a grader's log again
from its first byte; its evaluation is recorded only once it is read whole).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import aiohttp

from agentjobs.adapters import metrics
from agentjobs.adapters.kube import ApiError, JsonObject
from agentjobs.adapters.log_follower import LogFollower
from agentjobs.contract.limits import guard
from agentjobs.contract.phase import phase_core, phase_status
from agentjobs.contract.reading.grade_reader import GradeReader, GradeVerdict
from agentjobs.contract.reading.transcript_reader import ReaderVerdict, TranscriptReader
from agentjobs.contract.reading.transcripts import formats
from agentjobs.contract.resolution import resolution
from agentjobs.controllers.phase.limit_guard import LimitGuard, LimitWatch
from agentjobs.controllers.phase.phase_context import PhaseContext
from agentjobs.controllers.phase.transcript import Transcript
from agentjobs.kube import pod_state, pods
from agentjobs.kube.pod_state import AgentState, Stage
from agentjobs.models.contract import SystemFailure, TranscriptFormat, Usage
from agentjobs.runtime import backoff

logger = logging.getLogger(__name__)
# A follow stream silent this long is reconnected (the resume check makes that safe). A
# vanished peer ends it sooner, through its connection's keepalive (adapters/tcp_keepalive):
# this only bounds a peer that answers probes and sends nothing. At 120 s, 5,000 agents of
# 300 s had each log read twice more from its first byte, only for being quiet.
LOG_IDLE_SECONDS = 600.0
# A stream that ended while the pod still showed its agent running is followed again when
# the pod's next event comes (its termination, mostly), or after this long.
RECONNECT_SECONDS = 2.0
STREAM_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, ApiError)
# The attempt's running status is held for the log's first checkpoint; an agent silent this
# long after its start is shown running without it.
SILENT_START_SECONDS = 5.0
FINAL_READ_TRIES = 5
# How long an interrupted pod is given to stop its agent when its deletion has no deadline.
INTERRUPTED_GRACE_SECONDS = 60.0


class Verdict(Protocol):
    """What a reader says at the end of a log; whether an agent CLI's terminal event came."""

    @property
    def terminal_event_seen(self) -> bool: ...

    @property
    def usage(self) -> Usage | None: ...


VerdictT = TypeVar("VerdictT", bound=Verdict)
VerdictT_co = TypeVar("VerdictT_co", bound=Verdict, covariant=True)


class StreamReader(Protocol[VerdictT_co]):
    """A block reader fed the log as it arrives (an agent's or a grader's)."""

    @property
    def model(self) -> str | None: ...

    def feed(self, chunk: bytes) -> None: ...

    def close(self) -> VerdictT_co: ...


@dataclass(frozen=True)
class LogResult(Generic[VerdictT]):
    run: resolution.RunFacts
    verdict: VerdictT
    transcript: Transcript


def agent_log(
    ctx: PhaseContext, pod_name: str, *, idle_seconds: float = LOG_IDLE_SECONDS
) -> LogReading[ReaderVerdict]:
    """The agent's log, its progress checkpointed."""
    transcript_format = ctx.spec.transcript_format or TranscriptFormat.TEXT
    limits = ctx.spec.limits
    # R71: what the Execution's earlier phases and this phase's earlier runs used counts.
    budget = guard.Budget.of(ctx.spec.budget, ctx.status.usage)
    reader = TranscriptReader(
        transcript_format, prices=ctx.config.price_table, limits=limits, budget=budget
    )
    watch = None
    if guard.watched(limits, ctx.spec.budget):
        watch = LimitWatch(
            limits,
            budget,
            passed=lambda: reader.limit_passed.crossing if reader.limit_passed else None,
            spent=reader.spent,
        )

    return LogReading(
        ctx,
        pod_name,
        reader,
        transcript_format,
        cli_error=lambda verdict: verdict.agent_cli_error,
        checkpointed=True,
        idle_seconds=idle_seconds,
        watch=watch,
    )


def grader_log(
    ctx: PhaseContext, pod_name: str, transcript_format: TranscriptFormat | None
) -> LogReading[GradeVerdict]:
    """A grader's log (R39), read from its first byte, its progress not checkpointed."""
    transcript_format = transcript_format or TranscriptFormat.TEXT
    return LogReading(
        ctx,
        pod_name,
        GradeReader(transcript_format),
        transcript_format,
        cli_error=lambda verdict: verdict.grader_cli_error,
        container=pods.GRADER_CONTAINER,
    )


class LogReading(Generic[VerdictT]):
    """Reads one pod's log to its end, watching the pod between streams. When
    ``checkpointed`` (the agent's log) progress is checkpointed in ``status.log``; when not,
    the log is read from its first byte whatever the status says."""

    def __init__(
        self,
        ctx: PhaseContext,
        pod_name: str,
        reader: StreamReader[VerdictT],
        transcript_format: TranscriptFormat,
        *,
        cli_error: Callable[[VerdictT], SystemFailure | None],
        checkpointed: bool = False,
        idle_seconds: float = LOG_IDLE_SECONDS,
        container: str = pods.AGENT_CONTAINER,
        watch: LimitWatch | None = None,
    ) -> None:
        self._ctx = ctx
        self._status_writes = asyncio.Lock()  # the idle watch writes beside the reading
        self._guard = None
        if watch is not None:
            self._guard = LimitGuard(ctx, pod_name, container, watch, self._status_writes)
        self._pod_name = pod_name
        self._container = container
        self._checkpointed = checkpointed
        progress = ctx.status.log if checkpointed else None
        self._follower = LogFollower(
            ctx.kube,
            namespace=ctx.namespace,
            pod=pod_name,
            container=container,
            idle_seconds=idle_seconds,
            known=(progress.bytes_read, progress.sha256)
            if progress and progress.bytes_read
            else None,
        )
        self._needs_terminal_event = formats.has_events(transcript_format)
        self._reader = reader
        self._cli_error = cli_error
        self._transcript = Transcript(
            kept=ctx.storage is not None, limit=ctx.config.max_transcript_bytes
        )
        self._interrupted: SystemFailure | None = None
        self._give_up_at: float | None = None

    async def read(self) -> LogResult[VerdictT]:
        """The log read to its proven end; the transcript is the caller's to close then (on
        an error, it is closed here)."""
        shown = None
        if self._checkpointed and self._ctx.holds:
            shown = asyncio.create_task(self._show_held(SILENT_START_SECONDS))
        try:
            if self._guard is not None:
                await self._guard.start()
            return await self._read()
        except BaseException:
            self._transcript.close()
            raise
        finally:
            if shown is not None:
                shown.cancel()
            if self._guard is not None:
                self._guard.end()

    async def _show_held(self, seconds: float) -> None:
        """Write the held running status if no checkpoint has carried it after ``seconds``;
        a write that fails leaves it to the next one."""
        await asyncio.sleep(seconds)
        async with self._status_writes:
            if not self._ctx.holds:
                return
            try:
                await self._ctx.write_status(self._ctx.status)
            except STREAM_ERRORS as error:
                logger.info("running status of %s not written yet: %s", self._ctx.name, error)

    async def _read(self) -> LogResult[VerdictT]:
        errored = not await self._pass(follow=True)
        waited = False
        while True:
            pod = await self._ctx.current_pod(self._pod_name)
            if pod is None:
                return self._vanished()
            state = pod_state.agent_state(pod, self._container)
            self._note_interruption(pod, state)
            if state.stage is Stage.TERMINATED:
                return await self._finish(pod, state)
            if self._interrupted is not None and (errored or self._past_grace()):
                return self._result(pod, state, whole=False)  # its node is gone, or it hangs
            if waited:
                errored = not await self._pass(follow=True)
            else:
                # A stream mostly ends just before the pod shows its agent terminated: the
                # pod is looked at again first, so that only the last read follows.
                await self._ctx.wait(RECONNECT_SECONDS)
            waited = not waited

    async def _pass(self, *, follow: bool) -> bool:
        """One stream; False when it broke off with an error."""
        try:
            async for chunk in self._follower.follow(follow=follow):
                await self._take(chunk)
        except STREAM_ERRORS as error:
            if isinstance(error, ApiError) and error.forbidden:
                raise  # not a drop: the operator may not read logs (logged and retried)
            logger.info(
                "log stream of %s/%s ended early: %s",
                self._ctx.namespace,
                self._pod_name,
                str(error) or type(error).__name__,
            )
            return False
        return True

    async def _take(self, chunk: bytes) -> None:
        first = self._transcript.size == 0
        self._reader.feed(chunk)
        self._transcript.write(chunk)
        if self._guard is not None:
            await self._guard.read()
        if first and self._checkpointed:
            await self._checkpoint_progress()

    async def _checkpoint_progress(self) -> None:
        ctx = self._ctx
        async with self._status_writes:
            progress = phase_status.with_log_progress(
                ctx.status, bytes_read=self._follower.offset, sha256=self._follower.sha256
            )
            await ctx.write_status(progress)

    def _note_interruption(self, pod: JsonObject, state: AgentState) -> None:
        if self._interrupted is not None:
            return
        self._interrupted = self._ctx.interruption(pod, state)
        if self._interrupted is not None:
            deadline = pod_state.removal_deadline(pod)
            grace = INTERRUPTED_GRACE_SECONDS
            wall = deadline.timestamp() - time.time() + grace if deadline else grace
            self._give_up_at = time.monotonic() + max(wall, grace)

    def _past_grace(self) -> bool:
        return self._give_up_at is not None and time.monotonic() >= self._give_up_at

    async def _finish(self, pod: JsonObject, state: AgentState) -> LogResult[VerdictT]:
        """The agent has terminated: read what the follow streams may have missed."""
        for retry in range(FINAL_READ_TRIES):
            if await self._pass(follow=False):
                return self._result(pod, state, whole=True)
            if await self._ctx.current_pod(self._pod_name) is None:
                break
            await asyncio.sleep(backoff.FINAL_LOG_READ.delay(retry))
        return self._result(pod, state, whole=False)

    def _result(self, pod: JsonObject, state: AgentState, *, whole: bool) -> LogResult[VerdictT]:
        verdict = self._reader.close()
        self._count_spend(verdict)
        intact = resolution.stream_intact(
            read_from_first_byte=True,
            read_to_end_after_exit=whole,
            resumed_without_gap=self._follower.intact,
            needs_terminal_event=self._needs_terminal_event,
            terminal_event_seen=verdict.terminal_event_seen,
        )
        run = phase_core.log_read(
            pod,
            state,
            self._ctx.stops,
            stream_intact=intact,
            noticed=self._interrupted,
            cli_error=self._cli_error(verdict),
            stopped=self._guard.run_stop() if self._guard is not None else None,
        )
        return LogResult(run, verdict, self._transcript)

    def _vanished(self) -> LogResult[VerdictT]:
        """R22a: the pod vanished before its agent container terminated."""
        run = phase_core.vanished(self._ctx.stops, self._interrupted)
        verdict = self._reader.close()
        self._count_spend(verdict)
        return LogResult(run, verdict, self._transcript)

    def _count_spend(self, verdict: VerdictT) -> None:
        spent = guard.Spent.of(verdict.usage)
        prices = self._ctx.config.price_table
        metrics.spent(
            self._ctx.namespace,
            self._reader.model,
            prices.models if prices is not None else (),
            tokens_used=spent.tokens,
            cost=spent.cost_usd,
        )
