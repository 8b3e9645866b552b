"""The outcome loop (R37-R44) as a phase's runner drives it.

After an agent attempt concludes, :func:`after_attempt` either ends the phase
with it (no outcome, or an attempt that did not complete: nothing is graded,
R37) or starts its evaluation: the grader's pod ``<phase>-g<n>`` grades attempt
``n`` (pod ``<phase>-a<n>``, evaluation ``n - 1``, 0-based), run by the same
pod run as the agent's (:mod:`pod_run`). The evaluation's end is written in
one status write with what follows it, the next attempt or the phase's end
(:mod:`agentjobs.contract.phase.loop_status`), so a restarted operator resumes
exactly: an evaluation recorded as started and not finished is graded again
by the same grader pod (found by its name), from its log's first byte.

Decision where the contract is silent: the revised attempt's evaluation file
holds the grader's words uncut; if the operator restarts between the
evaluation's end and the revised attempt's pod, the file is rebuilt from the
status record, which cuts long texts (``record.py``).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from agentjobs.adapters import metrics
from agentjobs.contract.grading import evaluation, grader, phase_end, record, revision
from agentjobs.contract.limits import guard
from agentjobs.contract.outcome import outcome
from agentjobs.contract.phase import loop_status, phase_core
from agentjobs.contract.phase.phase_core import AfterEvaluation
from agentjobs.controllers.phase import phase_finish, phase_log, phase_pod, pod_run
from agentjobs.controllers.phase.phase_context import Attempt, PhaseContext
from agentjobs.kube import naming, pods
from agentjobs.models.contract import (
    EvaluationResult,
    FailureKind,
    Grade,
    GradeState,
    PhaseStatus,
    SystemFailure,
    Usage,
)
from agentjobs.models.outcomes import Evaluation, PhaseOutcome
from agentjobs.models.resource_status import PhaseResourceStatus
from agentjobs.runtime import events

ONGOING_CHECK_SECONDS = 1.0
GRADER = pods.GRADER_CONTAINER
NO_STORAGE = SystemFailure(
    kind=FailureKind.CONFIG,
    code="OutcomeNeedsStorage",
    message="an outcome needs artifact storage: the grader reads the attempt's stored artifacts",
)


async def after_attempt(
    ctx: PhaseContext, attempt: Attempt, concluded: PhaseResourceStatus
) -> revision.Revision | None:
    """End the phase with the attempt, or grade it; the next attempt's revision if the
    loop goes on."""
    concluded = loop_status.with_earlier_usage(concluded, ctx.status.usage)
    spec_outcome = ctx.spec.outcome
    if spec_outcome is None or not phase_core.graded(concluded.status, ctx.stops):
        await phase_finish.write_final(ctx, attempt, concluded)
        return None
    grader_pod = naming.grader_pod(ctx.name, attempt.number)
    iteration = record.iteration_of(ctx.status.outcome, grader_pod=grader_pod)
    now = datetime.now(UTC)
    recorded = record.started(
        ctx.status.outcome, iteration=iteration, grader_pod=grader_pod, now=now
    )
    started = _evaluation(recorded.evaluations, iteration)
    max_iterations = spec_outcome.max_iterations
    grading = loop_status.grading(
        concluded,
        recorded=recorded,
        message=f"{started.grader_pod} grades the work of {attempt.pod_name}",
        generation=ctx.generation,
        now=now,
    )
    if not await ctx.write_status(grading):
        return None
    events.post(
        ctx.body,
        reason=record.START_EVENT,
        message=record.start_message(started, max_iterations=max_iterations),
    )
    return await grade(ctx, attempt)


async def grade(ctx: PhaseContext, attempt: Attempt) -> revision.Revision | None:
    """Run (or find again) the grader of ``attempt``, record how its evaluation ended and
    go on as it says: the next attempt's revision, or None when the phase has ended."""
    spec_outcome = ctx.spec.outcome
    assert spec_outcome is not None and ctx.status.outcome is not None
    grader_name = naming.grader_pod(ctx.name, attempt.number)
    iteration = record.iteration_of(ctx.status.outcome, grader_pod=grader_name)
    evaluated, grade_read, spent = await _evaluate(ctx, attempt, grader_name, iteration)
    now = datetime.now(UTC)
    explanation = grade_read.explanation if grade_read else None
    if explanation is None and evaluated.cause is not None:
        explanation = evaluated.cause.message  # a failed evaluation says why
    criteria = grade_read.criteria if grade_read else []
    recorded = record.finished(
        ctx.status.outcome,
        iteration=iteration,
        result=evaluated.result,
        explanation=explanation,
        criteria=criteria,
        spent=spent,
        now=now,
    )
    finished = _evaluation(recorded.evaluations, iteration)
    metrics.evaluations.labels(evaluated.result).inc()
    handed_on = ctx.status.handoff
    next_revision: revision.Revision | None = None
    following = phase_core.after_evaluation(evaluated, ctx.stops, handed_on=handed_on is not None)
    if following is AfterEvaluation.CANCELLED:
        status = _cancelled(ctx, recorded, spent, now)
    elif following is AfterEvaluation.REVISE:
        assert evaluated.next_iteration is not None and handed_on is not None
        next_revision = revision.revision_for(
            iteration=iteration,
            max_iterations=spec_outcome.max_iterations,
            explanation=explanation,
            criteria=criteria,
            previous=handed_on,
        )
        status = loop_status.revising(
            ctx.status,
            recorded=recorded,
            spent=spent,
            next_attempt=attempt.number + 1,
            message=f"{naming.pod(ctx.name, attempt.number + 1)} revises the work",
            generation=ctx.generation,
            now=now,
        )
    else:
        # The graded attempt's concluded status holds its own outcome (written with it).
        assert ctx.status.task_outcome is not None
        end = phase_end.phase_end(
            evaluated,
            criteria=criteria,
            explanation=explanation,
            agent_outcome=ctx.status.task_outcome,
            max_iterations=spec_outcome.max_iterations,
            now=now,
        )
        status = loop_status.ended(
            ctx.status,
            end,
            recorded=recorded,
            spent=spent,
            generation=ctx.generation,
            now=now,
        )
    events.post(
        ctx.body,
        reason=record.END_EVENT,
        message=record.end_message(finished),
        warning=evaluated.result
        not in (EvaluationResult.SATISFIED, EvaluationResult.NEEDS_REVISION),
    )
    if status.status is PhaseStatus.RUNNING:
        if not await ctx.write_status(status):
            return None
    else:
        await phase_finish.write_final(ctx, attempt, status)
    await ctx.release_pod(grader_name)
    return next_revision


def recorded_revision(ctx: PhaseContext) -> revision.Revision | None:
    """A revised attempt's revision rebuilt from the status (after a restart, R42)."""
    if ctx.spec.outcome is None:
        return None
    return revision.recorded_revision(
        ctx.status.outcome, ctx.status.handoff, max_iterations=ctx.spec.outcome.max_iterations
    )


async def _evaluate(
    ctx: PhaseContext, attempt: Attempt, grader_name: str, iteration: int
) -> tuple[evaluation.Evaluated, Grade | None, Usage | None]:
    """The grader's run and its grade, as evaluation ``iteration`` of the loop."""
    spec_outcome = ctx.spec.outcome
    assert spec_outcome is not None
    limit = spec_outcome.max_iterations

    def failed(cause: SystemFailure) -> tuple[evaluation.Evaluated, None, None]:
        return evaluation.Evaluated(iteration, EvaluationResult.FAILED, cause), None, None

    if phase_core.grading_stopped(ctx.stops):
        return evaluation.Evaluated(iteration, EvaluationResult.INTERRUPTED), None, None
    handed_on = ctx.status.handoff
    if ctx.storage is None or handed_on is None or attempt.bucket is None:
        return failed(NO_STORAGE)
    rubric = await _rubric(ctx)
    if isinstance(rubric, SystemFailure):
        return failed(rubric)
    # R71: the status counts the graded attempt by now.
    spent_out = guard.budget_spent(guard.Budget.of(ctx.spec.budget, ctx.status.usage))
    if spent_out is not None:
        return failed(spent_out.not_started(f"grader {grader_name!r}"))
    pod = phase_pod.GraderPod(
        spec=grader.grader_spec(ctx.spec, handed_on, ctx.status.repositories or []),
        pod_name=grader_name,
        files=grader.grader_files(spec_outcome, rubric),
        secret_name=naming.grader_storage_secret(ctx.name, ctx.uid, attempt.number),
    )
    refused = await phase_pod.create_grader_pod(ctx, attempt, pod)
    if refused is not None:
        return failed(refused)
    root = ctx.storage.grader_root(ctx.spec, namespace=ctx.namespace, attempt=attempt.number)
    ongoing = asyncio.create_task(_post_ongoing(ctx, iteration))
    try:
        ran = await pod_run.run_pod(
            ctx,
            grader_name,
            container=GRADER,
            reading=lambda: phase_log.grader_log(ctx, grader_name, pod.spec.transcript_format),
            transcript_at=Attempt(grader_name, attempt.number, attempt.bucket, root),
        )
    finally:
        ongoing.cancel()
    run, verdict = ran.run, ran.verdict
    graded = verdict.grade if verdict else Grade(state=GradeState.NOT_REPORTED)
    grader_run = phase_core.grader_run(
        run, ctx.stops, verdict.grader_cli_error if verdict else None
    )
    evaluated = evaluation.evaluate(graded, grader_run, iteration=iteration, max_iterations=limit)
    return evaluated, (graded if verdict else None), (verdict.usage if verdict else None)


async def _rubric(ctx: PhaseContext) -> str | SystemFailure:
    """The outcome's rubric, inline or from its ConfigMap (R37)."""
    spec_outcome = ctx.spec.outcome
    assert spec_outcome is not None
    if spec_outcome.rubric is not None:
        return spec_outcome.rubric
    assert spec_outcome.rubric_from is not None
    ref = spec_outcome.rubric_from.config_map_key_ref
    return await phase_pod.config_map_value(ctx.kube, ctx.namespace, ref, what="rubric")


async def _post_ongoing(ctx: PhaseContext, iteration: int) -> None:
    """``OutcomeEvaluationOngoing`` every 30 s while the grader runs (R43)."""
    last: datetime | None = None
    while True:
        await asyncio.sleep(ONGOING_CHECK_SECONDS)
        recorded = ctx.status.outcome
        if recorded is None:
            continue
        current = _evaluation(recorded.evaluations, iteration)
        now = datetime.now(UTC)
        if current.started_at is not None and record.ongoing_due(current.started_at, last, now=now):
            last = now
            events.post(
                ctx.body,
                reason=record.ONGOING_EVENT,
                message=record.ongoing_message(current, now=now),
            )


def _cancelled(
    ctx: PhaseContext, recorded: PhaseOutcome, spent: Usage | None, now: datetime
) -> PhaseResourceStatus:
    """Cancelled while its grader ran: the phase ``cancelled`` (R22), its work partial."""
    end = phase_end.LoopEnd(
        PhaseStatus.CANCELLED,
        None,
        None,
        outcome.cancelled("The phase was cancelled while its outcome was evaluated.", now=now),
    )
    return loop_status.ended(
        ctx.status,
        end,
        recorded=recorded,
        spent=spent,
        generation=ctx.generation,
        now=now,
    )


def _evaluation(evaluations: list[Evaluation], iteration: int) -> Evaluation:
    return next(e for e in evaluations if e.iteration == iteration)
