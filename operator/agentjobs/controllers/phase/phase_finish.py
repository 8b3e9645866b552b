"""Finishing a phase: what the harvester stored, the contract applied, the final status.

Only a final manifest counts as a complete harvest: a harvester that crashed or
was killed before its last sync leaves the phase saying its artifacts are
incomplete, never completing it on a partial record.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from agentjobs.adapters import metrics
from agentjobs.contract.artifacts import bucket_policy, handoff, harvest
from agentjobs.contract.artifacts.artifact_rule import RecoveryContext
from agentjobs.contract.limits import guard
from agentjobs.contract.outcome import phase
from agentjobs.contract.phase import phase_status
from agentjobs.contract.reading.transcript_reader import ReaderVerdict
from agentjobs.contract.repositories import status as repository_status
from agentjobs.contract.resolution import resolution
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.controllers.phase.phase_pod import delete_finished_pods, delete_secret
from agentjobs.models.output import OutputEntry
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.models.storage import ArtifactManifest, CheckoutRecord, RepositoryRecord
from agentjobs.services.phase_storage import (
    StoredObject,
    bundle_url,
    stored_files,
    stored_work,
)

logger = logging.getLogger(__name__)


async def _collect(ctx: PhaseContext, attempt: Attempt) -> ArtifactManifest | None:
    """The manifest the harvester wrote: the output listing, whether its last sync finished,
    the git repositories it found (R52) and checked out (R63), and why it gave up, if it
    did."""
    assert ctx.storage is not None and attempt.bucket is not None and attempt.root is not None
    manifest = await ctx.storage.manifest(attempt.bucket, attempt.root, ctx.report_waiting)
    if manifest is not None and manifest.final:
        metrics.harvest_bytes.inc(sum(e.size for e in manifest.entries if e.uploaded))
    return manifest


async def write_final(ctx: PhaseContext, attempt: Attempt, status: PhaseResourceStatus) -> None:
    """Write the phase's final status; its tokens are needed no more, nor (with storage,
    which holds their logs) its pods, unless ``keepPods``."""
    if not await ctx.write_status(status):
        return
    classified = f" ({status.failure_classification})" if status.failure_classification else ""
    outcome = status.task_outcome
    why = f": {outcome.terminal_reason}" if outcome and status.failure_classification else ""
    if status.error:
        why += f" ({status.error})"
    logger.info("ended %s%s%s after %d attempt(s)", status.status, classified, why, attempt.number)
    _count_end(ctx, status)
    if ctx.storage is None:
        return  # the pods keep the only copy of their logs
    await delete_secret(ctx, attempt.number)
    if not ctx.spec.keep_pods:
        await delete_finished_pods(ctx)


def _count_end(ctx: PhaseContext, status: PhaseResourceStatus) -> None:
    ended = str(status.status)
    metrics.phases_finished.labels(ended, status.failure_classification or "").inc()
    if status.started_at is not None and status.finished_at is not None:
        spent = (status.finished_at - status.started_at).total_seconds()
        metrics.phase_duration.labels(ended).observe(spent)
    if ctx.agent_ended_at is not None:  # this process saw the agent's log end
        metrics.agent_end_to_finished.observe(time.monotonic() - ctx.agent_ended_at)


async def conclude(
    ctx: PhaseContext, attempt: Attempt, run: resolution.RunFacts, verdict: ReaderVerdict
) -> PhaseResourceStatus:
    """The status this attempt alone gives the phase (not written: an outcome's loop may
    grade it first, R37), with its artifacts stored and handed on."""
    output: list[OutputEntry] | None = None
    stored: dict[str, StoredObject] = {}
    complete = True
    work: list[RepositoryRecord] = []
    checkouts: list[CheckoutRecord] = []
    failure: str | None = None
    if ctx.storage is not None and ctx.status.pod_name is not None:
        manifest = await _collect(ctx, attempt)
        output, complete = [], False
        if manifest is not None:
            assert attempt.bucket is not None and attempt.root is not None
            output = harvest.listing(manifest)
            stored = stored_files(attempt.bucket, attempt.root, manifest)
            complete = manifest.final and manifest.failure is None
            work, checkouts, failure = manifest.work, manifest.checkouts, manifest.failure
    elif ctx.storage is not None:
        output = []
    now = datetime.now(UTC)
    result = phase.resolve_phase(
        report=verdict.report,
        run=run,
        output=output,
        recovery=RecoveryContext(
            phase_name=ctx.spec.name,
            last_message=verdict.last_message,
            declared_outputs=tuple(ctx.spec.outputs or ()),
            work=work,
            unpushed=frozenset(c.name for c in checkouts if c.pushed is False),
            stopped_by=guard.stop_words(run.system_failure),
        ),
        now=now,
        artifacts_complete=complete,
        harvest_failure=failure,
    )
    handed_on = None
    # A bucket off the allow-list, or missing (R60), blocked the phase before it ran: nothing
    # is written there.
    bucket_blocked = run.system_failure is not None and (
        run.system_failure.code in bucket_policy.BLOCKERS
    )
    if (
        ctx.storage is not None
        and result.artifacts is not None
        and attempt.bucket
        and ctx.storage.policy.allows(attempt.bucket)
        and not bucket_blocked
    ):
        stored |= await ctx.storage.store_recovered(
            attempt.bucket, attempt.root or "", result.artifacts.artifacts, ctx.report_waiting
        )
        listed = handoff.handoff_manifest(
            result.artifacts.artifacts, {path: (s.url, s.sha256) for path, s in stored.items()}
        )
        handed_on = await ctx.storage.store_handoff(
            attempt.bucket, attempt.root or "", listed, ctx.report_waiting
        )
    finished = phase_status.finished(
        ctx.status,
        verdict=verdict,
        run=run,
        result=result,
        # R52's patches are linked in the status; artifacts.json hands on only output/.
        stored={
            path: (item.url, item.sha256)
            for path, item in (stored | stored_work(attempt.bucket, attempt.root, work)).items()
        },
        generation=ctx.generation,
        now=now,
        handoff=handed_on,
        limits=ctx.spec.limits,
    )
    if not ctx.spec.repositories:
        return finished
    entries, unpushed = repository_status.phase_repositories(
        ctx.spec.repositories,
        checkouts,
        lambda name: bundle_url(attempt.bucket, attempt.root, name),
    )
    return phase_status.with_repositories(finished, entries, unpushed)
