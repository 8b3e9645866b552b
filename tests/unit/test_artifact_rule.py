"""The artifact rule (R28-R35) and its eight-words test (R32).

Cases: what is collected and skipped (R28); empty files replaced by the
recovered message (R29); no files at all (R30); the recovered artifact's
title, banner and branch section (R31); the eight-words-of-substance test
(R32); the error of a phase with nothing usable (R33); kept and partial work
of failed, cancelled, interrupted and retried phases (R34); where the next
phase finds the artifacts (R35); the whole phase resolved with its artifacts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePosixPath

import pytest

from agentjobs.contract.artifacts import artifact_rule, handoff
from agentjobs.contract.artifacts.artifact_rule import ArtifactBranch, RecoveryContext
from agentjobs.contract.outcome import phase
from agentjobs.contract.resolution.resolution import RunFacts
from agentjobs.contract.text import substance
from agentjobs.models.contract import (
    Artifact,
    FailureClassification,
    PhaseStatus,
    Report,
    ReportState,
)
from agentjobs.models.output import EntryKind, OutputEntry
from agentjobs.models.storage import RepositoryRecord

SUBSTANTIVE = "I rewrote the retry loop in client.py and added two regression tests for timeouts."
NOW = datetime(2026, 11, 30, tzinfo=UTC)


def file(path: str, size: int = 10) -> OutputEntry:
    return OutputEntry(path=path, kind=EntryKind.FILE, size=size)


def context(message: str | None = SUBSTANTIVE, **extra: object) -> RecoveryContext:
    return RecoveryContext(phase_name="implement", last_message=message, **extra)  # type: ignore[arg-type]


def plan(
    entries: list[OutputEntry],
    message: str | None = SUBSTANTIVE,
    end: ArtifactBranch = ArtifactBranch.COMPLETING,
    **extra: object,
) -> artifact_rule.ArtifactPlan:
    return artifact_rule.plan_artifacts(entries, context(message, **extra), end)


def paths(result: artifact_rule.ArtifactPlan) -> list[str]:
    return [artifact.path for artifact in result.artifacts]


# -- R28 collect ---------------------------------------------------------------


def test_r28_every_regular_non_empty_file_is_an_artifact_under_its_relative_path() -> None:
    result = plan([file("report.md"), file("src/deep/patch.diff", 500)])
    assert paths(result) == ["report.md", "src/deep/patch.diff"]
    assert [a.title for a in result.artifacts] == ["report.md", "src/deep/patch.diff"]
    assert not result.deliverable_recovered
    assert result.error is None


def test_r28_anything_inside_pycache_or_pytest_cache_is_skipped() -> None:
    result = plan(
        [
            file("report.md"),
            file("__pycache__/x.pyc"),
            file("pkg/__pycache__/y.pyc"),
            file(".pytest_cache/v/cache/lastfailed"),
        ]
    )
    assert paths(result) == ["report.md"]
    assert {entry.path for entry in result.skipped} == {
        "__pycache__/x.pyc",
        "pkg/__pycache__/y.pyc",
        ".pytest_cache/v/cache/lastfailed",
    }


def test_r28_a_file_merely_named_like_a_junk_directory_is_kept() -> None:
    assert paths(plan([file("notes/__pycache__")])) == ["notes/__pycache__"]


def test_r28_a_symlink_is_recorded_as_skipped_with_a_warning() -> None:
    result = plan([file("report.md"), OutputEntry(path="passwd", kind=EntryKind.SYMLINK)])
    assert paths(result) == ["report.md"]
    assert result.skipped == [
        artifact_rule.SkippedEntry("passwd", "symlink, not followed", EntryKind.SYMLINK)
    ]
    assert any("symlink" in warning for warning in result.warnings)


def test_r28_special_files_are_never_artifacts() -> None:
    result = plan([file("a.txt"), OutputEntry(path="pipe", kind=EntryKind.SPECIAL)])
    assert paths(result) == ["a.txt"]
    assert result.skipped[0].path == "pipe"


# -- R29 empty files -------------------------------------------------------------


def test_r29_each_empty_file_is_replaced_by_the_recovered_message_under_its_own_path() -> None:
    result = plan([file("report.md"), file("summary.md", 0), file("notes/todo.txt", 0)])
    assert paths(result) == ["notes/todo.txt", "report.md", "summary.md"]
    recovered = {a.path: a for a in result.artifacts if a.recovered}
    assert set(recovered) == {"notes/todo.txt", "summary.md"}
    assert all(SUBSTANTIVE in (a.content or "") for a in recovered.values())
    assert result.deliverable_recovered


# -- R30 no files ---------------------------------------------------------------


def test_r30_with_no_file_the_message_becomes_recovered_from_transcript_md() -> None:
    result = plan([])
    assert paths(result) == ["recovered-from-transcript.md"]
    assert result.artifacts[0].recovered


def test_r30_skipped_entries_are_not_collectable_files() -> None:
    result = plan([file("__pycache__/a.pyc"), OutputEntry(path="l", kind=EntryKind.SYMLINK)])
    assert paths(result) == ["recovered-from-transcript.md"]


# -- R31 recovery ----------------------------------------------------------------


def test_r31_a_recovered_artifact_is_marked_in_title_and_banner() -> None:
    artifact = plan([]).artifacts[0]
    assert artifact.title.endswith("[recovered from transcript]")
    assert artifact.content is not None
    first_line = artifact.content.splitlines()[0]
    assert "Recovered from the transcript" in first_line
    assert "not a deliverable" in first_line
    assert artifact.size == len(artifact.content.encode())


def test_r31_work_left_on_a_branch_is_named() -> None:
    work = [RepositoryRecord(repo="service", branch="agentjobs/fix-retry", head="a" * 40)]
    artifact = plan([], work=work).artifacts[0]
    assert "## Where this phase's work stands" in (artifact.content or "")
    assert "`agentjobs/fix-retry`" in (artifact.content or "")


def test_r31_without_a_branch_there_is_no_branch_section() -> None:
    assert "Where this phase's work stands" not in (plan([]).artifacts[0].content or "")


# -- R32 eight words ---------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Done.",
        "All set",
        "Task complete",
        "Finished!",
        "Thanks",
        "Done. All set! Task complete. Finished! Thanks",
        "The task is complete. Let me know if you need anything else!",
        "I cannot do that.",
        "I'm sorry, I can't help with that request today, my friend.",
        "",
        "🎉 ✅ 🚀",
        "one two three four five six seven",
    ],
)
def test_r32_messages_without_eight_words_of_substance_are_refused(message: str) -> None:
    assert not substance.has_substance(message)


@pytest.mark.parametrize(
    "message",
    [
        SUBSTANTIVE,
        "I could not push the branch because the credential rejects workflow changes",
        "I cannot do that because the repository is archived and read-only for everyone.",
        "Done. The failing test was caused by a race in the cache warmer thread.",
        "one two three four five six seven eight",
    ],
)
def test_r32_messages_with_eight_words_of_substance_are_accepted(message: str) -> None:
    assert substance.has_substance(message)


def test_r32_sign_offs_do_not_count_toward_the_eight_words() -> None:
    words = substance.substantive_words("Done. All set. Fixed the parser bug in lexer.py today.")
    assert words == ["fixed", "the", "parser", "bug", "in", "lexer", "py", "today"]


def test_r32_no_message_has_no_substance() -> None:
    assert not substance.has_substance(None)


# -- R33 nothing usable ----------------------------------------------------------------


def test_r33_no_file_and_a_bare_done_fails_with_an_error_naming_the_phase() -> None:
    result = plan([], "Done.")
    assert result.artifacts == []
    assert result.error is not None
    assert "'implement'" in result.error


def test_r33_the_error_names_the_declared_output_types() -> None:
    result = plan([], "Done.", declared_outputs=("pull-request", "report"))
    assert result.error is not None
    assert result.error.endswith("it declared outputs: pull-request, report")


def test_r33_a_content_file_beside_an_empty_one_does_not_save_a_bare_done() -> None:
    result = plan([file("report.md"), file("empty.md", 0)], "Done.")
    assert result.error is not None
    assert "empty.md" in result.error


# -- R34 kept work ---------------------------------------------------------------------


def test_r34_a_failed_phase_keeps_its_non_empty_files_titled_kept() -> None:
    result = plan([file("a.md"), file("b.md", 0)], end=ArtifactBranch.FAILED)
    assert paths(result) == ["a.md"]
    assert result.artifacts[0].title == "a.md (kept from a failed phase)"
    assert result.artifacts[0].kept_as == "failed_phase"


@pytest.mark.parametrize("end", [ArtifactBranch.FAILED, ArtifactBranch.PARTIAL])
def test_r34_with_no_file_the_last_message_is_kept_under_the_same_rule(end: ArtifactBranch) -> None:
    result = plan([], end=end)
    assert paths(result) == ["recovered-from-transcript.md"]
    marker = "(kept from a failed phase)" if end is ArtifactBranch.FAILED else "(partial)"
    assert marker in result.artifacts[0].title
    assert result.artifacts[0].title.endswith("[recovered from transcript]")
    assert plan([], "Done.", end=end).artifacts == []


def test_r34_a_cancelled_or_interrupted_phase_keeps_its_files_as_partial() -> None:
    result = plan([file("draft.md")], end=ArtifactBranch.PARTIAL)
    assert result.artifacts[0].title == "draft.md (partial)"
    assert result.artifacts[0].kept_as == "partial"


def test_r34_a_retried_attempt_whose_terminal_event_was_lost_keeps_nothing() -> None:
    assert plan([file("draft.md")], end=ArtifactBranch.RETRIED).artifacts == []


def test_r34_keeping_work_never_raises_an_error() -> None:
    assert plan([], "Done.", end=ArtifactBranch.FAILED).error is None


# -- R35 hand-off ---------------------------------------------------------------------


def test_r35_the_next_phase_receives_the_artifacts_under_artifacts_input() -> None:
    artifacts = plan([file("report.md"), file("src/a.py")]).artifacts
    destinations = [str(dest) for _, dest in handoff.handoff_destinations(artifacts)]
    assert destinations == [
        "/workspace/artifacts/input/report.md",
        "/workspace/artifacts/input/src/a.py",
    ]


@pytest.mark.parametrize("path", ["../etc/passwd", "/etc/passwd", "a/../../b", "a//b", "", "./a"])
def test_r35_a_path_that_could_escape_the_input_directory_is_refused(path: str) -> None:
    artifact = Artifact(path=path, title=path, size=1)
    with pytest.raises(handoff.UnsafeArtifactPath):
        handoff.handoff_destinations([artifact])


def test_r35_the_input_directory_can_be_placed_elsewhere_for_a_fetcher() -> None:
    artifact = Artifact(path="x/y.txt", title="x/y.txt", size=1)
    [(_, destination)] = handoff.handoff_destinations(
        [artifact], input_dir=PurePosixPath("/tmp/in")
    )
    assert destination == PurePosixPath("/tmp/in/x/y.txt")


# -- the whole phase ---------------------------------------------------------------------


def resolve(
    report: Report,
    entries: list[OutputEntry] | None,
    message: str | None,
    run: RunFacts | None = None,
) -> phase.PhaseResult:
    return phase.resolve_phase(
        report=report,
        run=run or RunFacts(exit_code=0, stream_intact=True),
        output=entries,
        recovery=context(message),
        now=NOW,
    )


SUCCESS = Report(state=ReportState.SUCCESS, success=True)


def test_r16_r33_a_success_with_nothing_usable_fails_as_platform_and_keeps_its_files() -> None:
    result = resolve(SUCCESS, [file("report.md"), file("empty.md", 0)], "Done.")
    assert result.status is PhaseStatus.FAILED
    assert result.failure_classification is FailureClassification.PLATFORM
    assert result.error is not None
    assert result.artifacts is not None
    assert [a.title for a in result.artifacts.artifacts] == ["report.md (kept from a failed phase)"]
    assert result.task_outcome.terminal_reason == "no_usable_output"


def test_r16_r30_a_success_with_no_file_completes_on_a_recovered_message() -> None:
    result = resolve(SUCCESS, [], SUBSTANTIVE)
    assert result.status is PhaseStatus.COMPLETED
    assert result.artifacts is not None
    assert result.artifacts.deliverable_recovered


def test_r16_without_a_listing_the_artifact_rule_is_taken_as_met() -> None:
    result = resolve(SUCCESS, None, "Done.")
    assert result.status is PhaseStatus.COMPLETED
    assert result.artifacts is None


def test_r22_r34_a_cancelled_phase_keeps_partial_work() -> None:
    result = resolve(
        SUCCESS,
        [file("draft.md")],
        None,
        RunFacts(exit_code=143, stream_intact=True, cancelled=True),
    )
    assert result.status is PhaseStatus.CANCELLED
    assert result.artifacts is not None
    assert result.artifacts.artifacts[0].kept_as == "partial"


def test_r34_a_retried_phase_attempt_keeps_nothing() -> None:
    result = phase.resolve_phase(
        report=SUCCESS,
        run=RunFacts(exit_code=None, stream_intact=False, interrupted=True),
        output=[file("draft.md")],
        recovery=context(),
        now=NOW,
        retried=True,
    )
    assert result.artifacts is not None
    assert result.artifacts.artifacts == []
