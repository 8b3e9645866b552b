"""R37, R40, R44: whether an iteration is graded, and how its evaluation ends.

An agent iteration is graded only when it resolved ``completed`` (R16/R19,
the artifact rule included); a failed, cancelled or interrupted iteration
ends the phase without an evaluation. An evaluation's result comes from the
grader's block and the grader pod's run: ``satisfied`` as graded;
``needs_revision`` starts the next iteration while iterations are left, and
at the last one is ``max_iterations_reached``; the grader's own ``failed``,
an unreadable or missing block, or a grader that did not exit cleanly is
``failed``; an interrupt is ``interrupted``.

Decision where the contract is silent: a grader's log that was not read
whole (R14: a gap, or an agent CLI's terminal event missing) makes the
evaluation ``failed``, since a stronger block may be in what was not read.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjobs.models.contract import (
    EvaluationResult,
    FailureKind,
    Grade,
    GradeState,
    PhaseStatus,
    SystemFailure,
)


@dataclass(frozen=True)
class GraderRun:
    """What the platform observed about one grader pod (as R14, R15, R13e for an agent).

    ``exit_code`` is None when the grader container never exited on its own;
    ``system_failure`` says why the pod ended abnormally (deadline, OOM,
    eviction, node loss), when the platform knows; ``cli_error`` is the
    grader's agent CLI's own verdict that its run failed, classified.
    """

    exit_code: int | None
    stream_intact: bool = True
    interrupted: bool = False
    system_failure: SystemFailure | None = None
    cli_error: SystemFailure | None = None


@dataclass(frozen=True)
class Evaluated:
    """How one evaluation ended; ``cause`` says why when it is ``failed`` or ``interrupted``."""

    iteration: int
    result: EvaluationResult
    cause: SystemFailure | None = None

    @property
    def next_iteration(self) -> int | None:
        """The agent iteration to run next with the grader's feedback (R42), if any."""
        return self.iteration + 1 if self.result is EvaluationResult.NEEDS_REVISION else None


INTERRUPTED = SystemFailure(
    kind=FailureKind.TRANSIENT,
    code="interrupted",
    message="the execution was interrupted while the outcome was being evaluated",
)


def is_graded(agent_iteration: PhaseStatus) -> bool:
    """R37: only an iteration that resolved ``completed`` is graded."""
    return agent_iteration is PhaseStatus.COMPLETED


def evaluate(grade: Grade, run: GraderRun, *, iteration: int, max_iterations: int) -> Evaluated:
    """R40: the result of evaluation ``iteration`` (0-based) of at most ``max_iterations``."""
    if run.interrupted:  # R44
        return Evaluated(iteration, EvaluationResult.INTERRUPTED, run.system_failure or INTERRUPTED)
    failure = _run_failure(run) or _grade_failure(grade)
    if failure is not None:
        return Evaluated(iteration, EvaluationResult.FAILED, failure)
    if grade.state is GradeState.SATISFIED:
        return Evaluated(iteration, EvaluationResult.SATISFIED)
    if iteration + 1 < max_iterations:
        return Evaluated(iteration, EvaluationResult.NEEDS_REVISION)
    return Evaluated(iteration, EvaluationResult.MAX_ITERATIONS_REACHED)


def _run_failure(run: GraderRun) -> SystemFailure | None:
    """Why the grader pod's run cannot be trusted, if it cannot: what the pod says first,
    then the CLI's own error, then the exit code, then a gap in its log."""
    if run.system_failure is not None:
        return run.system_failure
    if run.cli_error is not None:
        return run.cli_error
    if run.exit_code != 0:
        said = "did not exit" if run.exit_code is None else f"exited with code {run.exit_code}"
        code = "grader_no_exit" if run.exit_code is None else f"grader_exit_code_{run.exit_code}"
        return SystemFailure(kind=FailureKind.CRASH, code=code, message=f"the grader {said}")
    if not run.stream_intact:
        return SystemFailure(
            kind=FailureKind.STREAM_BROKEN,
            code="grader_stream_broken",
            message="the grader's log could not be read whole, so its grade cannot be trusted",
        )
    return None


def _grade_failure(grade: Grade) -> SystemFailure | None:
    if grade.state is GradeState.FAILED:
        detail = f": {grade.explanation}" if grade.explanation else ""
        message = f"the grader's result is failed{detail}"
        return SystemFailure(kind=FailureKind.GRADER_FAILED, code="grader_failed", message=message)
    if grade.state is GradeState.UNREADABLE:
        detail = grade.warnings[0] if grade.warnings else "unreadable grade"
        return SystemFailure(
            kind=FailureKind.UNREADABLE_REPORT, code="unreadable_grade", message=detail
        )
    if grade.state is GradeState.NOT_REPORTED:
        return SystemFailure(
            kind=FailureKind.GRADER_FAILED,
            code="no_grade",
            message="the grader ended without a GRADE_RESULT block",
        )
    return None
