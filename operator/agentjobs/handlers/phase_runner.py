"""Run one Phase to its end: prompt, pod, live log, resolution, status (R14-R22a, R36).

One asyncio task per running Phase, never a thread. The runner reads the
agent's log as it is written, feeding the streaming reader, and when the
agent container has terminated (or the pod never started it, or vanished)
it resolves the phase with the contract's functions and writes the Phase's
status. It is safe to kill at any moment: a new runner finds the same pod by
its deterministic name and reads the log again from its first byte (R12).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime
from typing import Any

import aiohttp

from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.adapters.log_follower import LogFollower
from agentjobs.handlers import events, paths
from agentjobs.handlers.config import OperatorConfig
from agentjobs.handlers.executions import dump_status
from agentjobs.logic import naming, phase, phase_status, pod_state, pods, resolution
from agentjobs.logic.artifact_rule import RecoveryContext
from agentjobs.logic.pod_state import Stage
from agentjobs.logic.transcript_reader import ReaderVerdict, TranscriptReader
from agentjobs.models.contract import (
    FailureKind,
    Report,
    ReportState,
    SystemFailure,
    TranscriptFormat,
)
from agentjobs.models.resources import API_VERSION, PhaseResourceStatus, PhaseSpec

logger = logging.getLogger(__name__)
RECHECK_SECONDS = 2.0
STREAM_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, ApiError)


class PhaseRunner:
    """Drives one Phase; ``notify`` wakes it when its pod or its spec changes."""

    def __init__(self, kube: Kube, config: OperatorConfig, *, namespace: str, name: str) -> None:
        self._kube = kube
        self._config = config
        self.namespace = namespace
        self.name = name
        self._changed = asyncio.Event()
        self._pod: JsonObject | None = None
        self._cancel_requested = False
        self._pod_deleted_by_us = False

    def notify(self, *, pod: JsonObject | None = None, cancel: bool = False) -> None:
        if pod is not None:
            self._pod = pod
        self._cancel_requested = self._cancel_requested or cancel
        self._changed.set()

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout=seconds)
        self._changed.clear()

    # -- the run ------------------------------------------------------------------

    async def run(self) -> None:
        body = await self._kube.get(paths.phase(self.namespace, self.name))
        if body is None:
            return
        spec = PhaseSpec.model_validate(body["spec"])
        status = PhaseResourceStatus.model_validate(body.get("status") or {})
        if phase_status.is_terminal(status):
            return
        self._cancel_requested = self._cancel_requested or spec.cancel
        attempt = status.attempt or 1
        pod_name = naming.pod(self.name, attempt)
        if status.pod_name is None:
            if self._cancel_requested:
                await self._finish(body, spec, status, _never_ran(cancelled=True), None)
                return
            failure = await self._create_pod(body, spec, attempt)
            if failure is not None:
                await self._finish(body, spec, status, _never_ran(failure=failure), None)
                return
            running = await self._write_running(body, status, pod_name, attempt)
            if running is None:
                return
            status = running
        await self._follow(body, spec, status, pod_name)

    async def _create_pod(
        self, body: JsonObject, spec: PhaseSpec, attempt: int
    ) -> SystemFailure | None:
        owner = pods.Owner(API_VERSION, "Phase", self.name, body["metadata"]["uid"])
        prompt = spec.prompt
        if prompt is None and spec.prompt_from is not None:
            prompt, failure = await self._referenced_prompt(spec)
            if failure is not None:
                return failure
        config_map = pods.prompt_config_map(
            phase_resource=self.name, namespace=self.namespace, owner=owner, prompt=prompt or ""
        )
        pod = pods.phase_pod(
            spec, phase_resource=self.name, namespace=self.namespace, owner=owner, attempt=attempt
        )
        try:
            await self._kube.create(paths.config_map(self.namespace), config_map)
            await self._kube.create(paths.pod(self.namespace), pod)
        except ApiError as error:
            if error.status in (400, 403, 422):
                quota = "exceeded quota" in error.message
                return SystemFailure(
                    kind=FailureKind.QUOTA if quota else FailureKind.CONFIG,
                    code=error.reason or "PodRejected",
                    message=f"the phase's pod was refused: {error.message}",
                )
            raise
        return None

    async def _referenced_prompt(self, spec: PhaseSpec) -> tuple[str | None, SystemFailure | None]:
        assert spec.prompt_from is not None
        ref = spec.prompt_from.config_map_key_ref
        config_map = await self._kube.get(paths.config_map(self.namespace, ref.name))
        prompt = ((config_map or {}).get("data") or {}).get(ref.key)
        if prompt is None:
            return None, SystemFailure(
                kind=FailureKind.CONFIG,
                code="PromptNotFound",
                message=f"the prompt is not in ConfigMap {ref.name!r} under key {ref.key!r}",
            )
        return str(prompt), None

    async def _write_running(
        self, body: JsonObject, previous: PhaseResourceStatus, pod_name: str, attempt: int
    ) -> PhaseResourceStatus | None:
        status = phase_status.running(
            previous,
            pod_name=pod_name,
            attempt=attempt,
            message=f"pod {pod_name} runs the agent",
            generation=body["metadata"].get("generation"),
            now=datetime.now(UTC),
        )
        if not await self._patch_status(status, previous):
            return None
        events.post_condition_changes(body, previous.conditions, status.conditions)
        return status

    async def _follow(
        self, body: JsonObject, spec: PhaseSpec, status: PhaseResourceStatus, pod_name: str
    ) -> None:
        canceller = asyncio.create_task(self._cancel_when_requested(pod_name))
        try:
            outcome = await self._wait_for_agent(pod_name)
            if isinstance(outcome, resolution.RunFacts):
                await self._finish(body, spec, status, outcome, None)
                return
            run, verdict = await self._read_log(body, spec, pod_name)
            await self._finish(body, spec, status, run, verdict)
        finally:
            canceller.cancel()

    async def _current_pod(self, pod_name: str) -> JsonObject | None:
        pod = await self._kube.get(paths.pod(self.namespace, pod_name))
        self._pod = pod
        return pod

    async def _wait_for_agent(self, pod_name: str) -> JsonObject | resolution.RunFacts:
        """The pod once its agent has started, or the run facts of a pod that never will."""
        deadline = time.monotonic() + self._config.pending_timeout
        while True:
            pod = await self._current_pod(pod_name)
            if pod is None:
                return _vanished(cancelled=self._cancel_requested)
            state = pod_state.agent_state(pod, pods.AGENT_CONTAINER)
            if state.stage is not Stage.WAITING:
                return pod
            if self._cancel_requested and self._pod_deleted_by_us:
                return _never_ran(cancelled=True)
            if time.monotonic() >= deadline:
                await self._kube.delete(paths.pod(self.namespace, pod_name), grace_period_seconds=0)
                return _never_ran(failure=pod_state.waiting_failure(pod, state))
            await self._wait(min(RECHECK_SECONDS, max(deadline - time.monotonic(), 0.05)))

    async def _read_log(
        self, body: JsonObject, spec: PhaseSpec, pod_name: str
    ) -> tuple[resolution.RunFacts, ReaderVerdict]:
        transcript_format = spec.transcript_format or TranscriptFormat.TEXT
        reader = TranscriptReader(transcript_format)
        follower = LogFollower(
            self._kube, namespace=self.namespace, pod=pod_name, container=pods.AGENT_CONTAINER
        )
        reports = 0
        while True:
            try:
                async for chunk in follower.follow():
                    reader.feed(chunk)
                    if reader.reports_seen != reports:
                        reports = reader.reports_seen
                        _post_report_read(body, reader.standing_report())
            except STREAM_ERRORS as error:
                logger.info("log stream of %s/%s dropped: %s", self.namespace, pod_name, error)
            pod = await self._current_pod(pod_name)
            state = pod_state.agent_state(pod, pods.AGENT_CONTAINER) if pod else None
            if pod is None or state is None:
                return _vanished(cancelled=self._cancel_requested), reader.close()
            if state.stage is Stage.TERMINATED:
                break
            await self._wait(0.2)
        verdict = reader.close()
        intact = resolution.stream_intact(
            read_from_first_byte=True,
            read_to_end_after_exit=True,
            resumed_without_gap=follower.intact,
            needs_terminal_event=transcript_format is TranscriptFormat.JSONL,
            terminal_event_seen=verdict.terminal_event_seen,
        )
        run = resolution.RunFacts(
            exit_code=state.exit_code,
            stream_intact=intact,
            cancelled=self._cancel_requested,
            system_failure=pod_state.termination_failure(pod, state),
        )
        return run, verdict

    async def _cancel_when_requested(self, pod_name: str) -> None:
        while not self._cancel_requested:
            await self._wait(RECHECK_SECONDS)
        self._pod_deleted_by_us = True
        await self._kube.delete(
            paths.pod(self.namespace, pod_name),
            grace_period_seconds=self._config.cancel_grace_seconds,
        )
        self._changed.set()

    async def _finish(
        self,
        body: JsonObject,
        spec: PhaseSpec,
        previous: PhaseResourceStatus,
        run: resolution.RunFacts,
        verdict: ReaderVerdict | None,
    ) -> None:
        now = datetime.now(UTC)
        verdict = verdict or ReaderVerdict(Report(state=ReportState.NOT_REPORTED), None, False)
        result = phase.resolve_phase(
            report=verdict.report,
            run=run,
            output=None,
            recovery=RecoveryContext(
                phase_name=spec.name,
                last_message=verdict.last_message,
                declared_outputs=tuple(spec.outputs or ()),
            ),
            now=now,
        )
        status = phase_status.finished(
            previous,
            verdict=verdict,
            run=run,
            result=result,
            generation=body["metadata"].get("generation"),
            now=now,
        )
        if await self._patch_status(status, previous):
            events.post_condition_changes(body, previous.conditions, status.conditions)

    async def _patch_status(
        self, status: PhaseResourceStatus, previous: PhaseResourceStatus
    ) -> bool:
        new, old = dump_status(status), dump_status(previous)
        patch = {**{key: None for key in old if key not in new}, **new}
        patched = await self._kube.merge_patch(
            paths.phase(self.namespace, self.name) + "/status", {"status": patch}
        )
        return patched is not None


def _post_report_read(body: dict[str, Any], report: Report) -> None:
    events.post(body, reason="ReportRead", message=f"the agent's report reads {report.state}")


def _never_ran(
    *, cancelled: bool = False, failure: SystemFailure | None = None
) -> resolution.RunFacts:
    return resolution.RunFacts(
        exit_code=None, stream_intact=False, cancelled=cancelled, system_failure=failure
    )


def _vanished(*, cancelled: bool) -> resolution.RunFacts:
    """R22a: the pod vanished before its agent container terminated."""
    return resolution.RunFacts(
        exit_code=None, stream_intact=False, cancelled=cancelled, interrupted=not cancelled
    )
