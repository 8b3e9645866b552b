"""Run one Phase to its end: prompt, pod, live log, artifacts, resolution, status.

One asyncio task per running Phase, never a thread. The runner reads the
agent's log as it is written, feeding the streaming reader and keeping the
bytes as the transcript. When the agent container has terminated (or the pod
never started it, or vanished) it waits for the harvester's last sync, reads
its manifest, applies the contract (R14-R36) and writes the Phase's status.
It is safe to kill at any moment: a new runner finds the same pod by its
deterministic name and reads the log again from its first byte (R12).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

import aiohttp

from agentjobs.adapters.kube import ApiError, JsonObject, Kube
from agentjobs.adapters.log_follower import LogFollower
from agentjobs.handlers import events, paths
from agentjobs.handlers.config import OperatorConfig
from agentjobs.handlers.executions import describe, dump_status
from agentjobs.handlers.phase_storage import PhaseStorage, StoredObject, stored_files
from agentjobs.logic import harvest, naming, phase, phase_status, pod_state, pods, resolution
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
from agentjobs.models.output import OutputEntry
from agentjobs.models.resources import API_VERSION, PhaseResourceStatus, PhaseSpec

logger = logging.getLogger(__name__)
RECHECK_SECONDS = 2.0
TRANSCRIPT_IN_MEMORY = 16 * 1024 * 1024
STREAM_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, ApiError)


@dataclass
class Transcript:
    """The agent's log as the operator read it, spooled to disk past 16 MiB."""

    file: IO[bytes] = field(
        default_factory=lambda: tempfile.SpooledTemporaryFile(TRANSCRIPT_IN_MEMORY)  # noqa: SIM115
    )
    size: int = 0

    def write(self, chunk: bytes) -> None:
        self.file.write(chunk)
        self.size += len(chunk)


@dataclass(frozen=True)
class Attempt:
    """One run of the phase's pod: its name and where its artifacts go."""

    pod_name: str
    number: int
    bucket: str | None = None
    root: str | None = None


class PhaseRunner:
    """Drives one Phase; ``notify`` wakes it when its pod or its spec changes."""

    def __init__(
        self,
        kube: Kube,
        config: OperatorConfig,
        storage: PhaseStorage | None,
        *,
        namespace: str,
        name: str,
    ) -> None:
        self._kube = kube
        self._config = config
        self._storage = storage
        self.namespace = namespace
        self.name = name
        self._changed = asyncio.Event()
        self._cancel_requested = False
        self._pod_deleted_by_us = False
        self._body: JsonObject = {}
        self._status = PhaseResourceStatus()

    def notify(self, *, cancel: bool = False) -> None:
        """Wake the runner: its pod changed, or (``cancel``) its Phase was told to stop."""
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
        self._body = body
        spec = PhaseSpec.model_validate(body["spec"])
        self._status = PhaseResourceStatus.model_validate(body.get("status") or {})
        if phase_status.is_terminal(self._status):
            return
        self._cancel_requested = self._cancel_requested or spec.cancel
        attempt = self._attempt(spec, self._status.attempt or 1)
        if self._status.pod_name is None:
            if self._cancel_requested:
                await self._finish(spec, attempt, _never_ran(cancelled=True), None, None)
                return
            failure = await self._create_pod(spec, attempt)
            if failure is not None:
                await self._finish(spec, attempt, _never_ran(failure=failure), None, None)
                return
            if not await self._write_running(attempt, f"pod {attempt.pod_name} runs the agent"):
                return
        canceller = asyncio.create_task(self._cancel_when_requested(attempt.pod_name))
        try:
            waited = await self._wait_for_agent(attempt.pod_name)
            if isinstance(waited, resolution.RunFacts):
                await self._finish(spec, attempt, waited, None, None)
                return
            run, verdict, transcript = await self._read_log(spec, attempt.pod_name)
            if not run.interrupted:
                await self._wait_for_harvester(attempt)
            await self._finish(spec, attempt, run, verdict, transcript)
        finally:
            canceller.cancel()

    def _attempt(self, spec: PhaseSpec, number: int) -> Attempt:
        pod_name = naming.pod(self.name, number)
        if self._storage is None:
            return Attempt(pod_name, number)
        return Attempt(
            pod_name,
            number,
            bucket=self._storage.bucket(spec),
            root=self._storage.attempt_root(spec, namespace=self.namespace, attempt=number),
        )

    async def _create_pod(self, spec: PhaseSpec, attempt: Attempt) -> SystemFailure | None:
        owner = pods.Owner(API_VERSION, "Phase", self.name, self._body["metadata"]["uid"])
        prompt = spec.prompt
        if prompt is None and spec.prompt_from is not None:
            prompt, failure = await self._referenced_prompt(spec)
            if failure is not None:
                return failure
        sidecars = await self._prepare_storage(attempt, owner, has_inputs=bool(spec.inputs))
        inputs = [item.model_dump(mode="json") for item in spec.inputs or []]
        config_map = pods.prompt_config_map(
            phase_resource=self.name,
            namespace=self.namespace,
            owner=owner,
            prompt=prompt or "",
            inputs_json=json.dumps(inputs) if sidecars else None,
        )
        pod = pods.phase_pod(
            spec,
            phase_resource=self.name,
            namespace=self.namespace,
            owner=owner,
            attempt=attempt.number,
            sidecars=sidecars,
            security=self._config.security,
        )
        try:
            await self._kube.create(paths.config_map(self.namespace), config_map)
            await self._kube.create(paths.pod(self.namespace), pod)
        except ApiError as error:
            # A quota or an invalid pod is the phase's blocker; any other refusal is the
            # operator's own permissions: raised, so that it is logged and retried.
            quota = error.forbidden and "exceeded quota" in error.message
            if quota or error.status in (400, 422):
                return SystemFailure(
                    kind=FailureKind.QUOTA if quota else FailureKind.CONFIG,
                    code=error.reason or "PodRejected",
                    message=f"the phase's pod was refused: {error.message}",
                )
            raise
        return None

    async def _prepare_storage(
        self, attempt: Attempt, owner: pods.Owner, *, has_inputs: bool
    ) -> pods.Sidecars | None:
        """The bucket and this phase's credentials Secret; the sidecars that use them."""
        if self._storage is None or attempt.bucket is None or attempt.root is None:
            return None
        await self._storage.ensure_bucket(attempt.bucket, self._report_waiting)
        settings = self._storage.store.settings
        secret_name = naming.storage_secret(self.name)
        await self._kube.create(
            paths.secret(self.namespace),
            pods.storage_secret(
                name=secret_name,
                namespace=self.namespace,
                owner=owner,
                access_key=settings.access_key,
                secret_key=settings.secret_key,
            ),
        )
        return pods.Sidecars(
            image=self._config.image,
            storage_environment=self._storage.settings_environment,
            credentials_secret=secret_name,
            bucket=attempt.bucket,
            attempt_root=attempt.root,
            harvest_interval_seconds=self._config.harvest_interval_seconds,
            has_inputs=has_inputs,
        )

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

    async def _write_running(self, attempt: Attempt, message: str) -> bool:
        status = phase_status.running(
            self._status,
            pod_name=attempt.pod_name,
            attempt=attempt.number,
            message=message,
            generation=self._body["metadata"].get("generation"),
            now=datetime.now(UTC),
        )
        return await self._write_status(status)

    async def _report_waiting(self, message: str) -> None:
        """Show why the phase is not moving (storage down, harvester retrying) in its status."""
        running = self._status.conditions and self._status.status is not None
        current = next((c.message for c in self._status.conditions if c.type == "Running"), None)
        if running and current != message and self._status.pod_name:
            await self._write_running(
                Attempt(self._status.pod_name, self._status.attempt or 1), message
            )

    async def _current_pod(self, pod_name: str) -> JsonObject | None:
        return await self._kube.get(paths.pod(self.namespace, pod_name))

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
        self, spec: PhaseSpec, pod_name: str
    ) -> tuple[resolution.RunFacts, ReaderVerdict, Transcript]:
        transcript_format = spec.transcript_format or TranscriptFormat.TEXT
        reader = TranscriptReader(transcript_format)
        transcript = Transcript()
        follower = LogFollower(
            self._kube, namespace=self.namespace, pod=pod_name, container=pods.AGENT_CONTAINER
        )
        reports = 0
        while True:
            try:
                async for chunk in follower.follow():
                    reader.feed(chunk)
                    transcript.write(chunk)
                    if reader.reports_seen != reports:
                        reports = reader.reports_seen
                        _post_report_read(self._body, reader.standing_report())
            except STREAM_ERRORS as error:
                if isinstance(error, ApiError) and error.forbidden:
                    raise  # not a drop: the operator may not read logs (logged and retried)
                logger.info("log stream of %s/%s dropped: %s", self.namespace, pod_name, error)
            pod = await self._current_pod(pod_name)
            state = pod_state.agent_state(pod, pods.AGENT_CONTAINER) if pod else None
            if pod is None or state is None:
                return _vanished(cancelled=self._cancel_requested), reader.close(), transcript
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
        return run, verdict, transcript

    async def _wait_for_harvester(self, attempt: Attempt) -> None:
        """Until the harvester's last sync is done: the pod has ended (or is gone)."""
        if self._storage is None:
            return
        started = time.monotonic()
        while True:
            pod = await self._current_pod(attempt.pod_name)
            if pod is None or pod_state.has_ended(pod, pods.HARVESTER_CONTAINER):
                return
            if time.monotonic() - started > RECHECK_SECONDS:
                line = await self._kube.log_tail(
                    self.namespace, attempt.pod_name, pods.HARVESTER_CONTAINER
                )
                await self._report_waiting(
                    f"the agent has finished; waiting for the harvester: {line or 'syncing'}"
                )
            await self._wait(RECHECK_SECONDS / 4)

    async def _cancel_when_requested(self, pod_name: str) -> None:
        while not self._cancel_requested:
            await self._wait(RECHECK_SECONDS)
        backoff = 1.0
        while True:
            try:
                await self._kube.delete(
                    paths.pod(self.namespace, pod_name),
                    grace_period_seconds=self._config.cancel_grace_seconds,
                )
                break
            except (ApiError, aiohttp.ClientError) as error:
                reason = describe(error) if isinstance(error, ApiError) else str(error)
                logger.error(
                    "phase %s/%s: cannot stop pod %s: %s; retrying in %.0f s",
                    self.namespace,
                    self.name,
                    pod_name,
                    reason,
                    backoff,
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
        self._pod_deleted_by_us = True
        self._changed.set()

    async def _collect(
        self, attempt: Attempt, transcript: Transcript | None
    ) -> tuple[list[OutputEntry] | None, dict[str, StoredObject]]:
        """What the harvester stored, once it is done, and the transcript beside it."""
        if self._storage is None or attempt.bucket is None or attempt.root is None:
            return None, {}
        reading = self._storage.manifest(attempt.bucket, attempt.root, self._report_waiting)
        if transcript is None:
            manifest = await reading
        else:
            storing = self._storage.store_transcript(
                attempt.bucket,
                attempt.root,
                transcript.file,
                transcript.size,
                self._report_waiting,
            )
            manifest, _ = await asyncio.gather(reading, storing)
        if manifest is None:
            return [], {}
        return harvest.listing(manifest), stored_files(attempt.bucket, attempt.root, manifest)

    async def _finish(
        self,
        spec: PhaseSpec,
        attempt: Attempt,
        run: resolution.RunFacts,
        verdict: ReaderVerdict | None,
        transcript: Transcript | None,
    ) -> None:
        verdict = verdict or ReaderVerdict(Report(state=ReportState.NOT_REPORTED), None, False)
        ran = self._status.pod_name is not None or transcript is not None
        output, stored = await self._collect(attempt, transcript) if ran else (None, {})
        if self._storage is not None and output is None:
            output = []  # the phase never ran: nothing was written
        now = datetime.now(UTC)
        result = phase.resolve_phase(
            report=verdict.report,
            run=run,
            output=output,
            recovery=RecoveryContext(
                phase_name=spec.name,
                last_message=verdict.last_message,
                declared_outputs=tuple(spec.outputs or ()),
            ),
            now=now,
        )
        if self._storage is not None and result.artifacts is not None and attempt.bucket:
            stored |= await self._storage.store_recovered(
                attempt.bucket, attempt.root or "", result.artifacts.artifacts, self._report_waiting
            )
        status = phase_status.finished(
            self._status,
            verdict=verdict,
            run=run,
            result=result,
            stored={path: (item.url, item.sha256) for path, item in stored.items()},
            generation=self._body["metadata"].get("generation"),
            now=now,
        )
        if await self._write_status(status) and self._storage is not None:
            await self._kube.delete(paths.secret(self.namespace, naming.storage_secret(self.name)))

    async def _write_status(self, status: PhaseResourceStatus) -> bool:
        previous = self._status
        new, old = dump_status(status), dump_status(previous)
        patch = {**{key: None for key in old if key not in new}, **new}
        patched = await self._kube.merge_patch(
            paths.phase(self.namespace, self.name) + "/status", {"status": patch}
        )
        if patched is None:
            return False
        self._status = status
        events.post_condition_changes(self._body, previous.conditions, status.conditions)
        return True


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
