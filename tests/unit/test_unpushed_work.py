"""R52's pure logic: what a repository's files mean and what the operator makes of them.

Cases: HEAD on a branch or detached, and refused when it names anything else;
loose and packed refs, invalid names and ids dropped; the upstream mapped
through the remote's fetch refspecs (default, explicit, a local "." remote,
none); git's ``log -z --raw`` stream read commit by commit, an empty commit
included; workflow paths matched exactly; a format-patch series' commits;
repository names the harvester could have recorded; stored patches with
paths derived, never read; kept patches as artifacts of failed and partial
phases, not of completed ones, a clash with an output file warned; R31's
section naming branch, patches and a skip reason.
"""

from __future__ import annotations

import pytest

from agentjobs.contract.artifacts import artifact_rule, unpushed_work
from agentjobs.contract.artifacts.artifact_rule import ArtifactBranch, RecoveryContext
from agentjobs.contract.artifacts.unpushed_work import BadRepository, CommitChanges, Head
from agentjobs.models.output import EntryKind, OutputEntry
from agentjobs.models.storage import RepositoryRecord, StoredPatch

A, B, C = "a" * 40, "b" * 40, "c" * 40
PATCH = StoredPatch(size=120, sha256="0" * 64)
WORKFLOW = StoredPatch(size=60, sha256="1" * 64)
MESSAGE = "I moved the retry loop into its own module and added a timeout test for it."


def record(**fields: object) -> RepositoryRecord:
    values: dict[str, object] = {
        "repo": "service",
        "branch": "fix",
        "head": A,
        "upstream": "origin/main",
        "commits": 2,
        "workflow_commits": 1,
        "unpushed_patch": PATCH,
        "workflow_patch": WORKFLOW,
    }
    return RepositoryRecord.model_validate(values | fields)


def test_head_on_a_branch_or_detached() -> None:
    assert unpushed_work.parse_head(b"ref: refs/heads/feature/x\n") == Head(branch="feature/x")
    assert unpushed_work.parse_head(f"{A}\n".encode()) == Head(branch=None, commit=A)


@pytest.mark.parametrize(
    "data", [b"ref: refs/remotes/origin/main\n", b"ref: refs/heads/../../etc\n", b"nonsense"]
)
def test_a_head_that_names_no_branch_or_commit_is_refused(data: bytes) -> None:
    with pytest.raises(BadRepository):
        unpushed_work.parse_head(data)


def test_refs_keep_only_valid_names_and_ids() -> None:
    packed = unpushed_work.parse_packed_refs(
        f"# pack-refs with: peeled\n{A} refs/remotes/origin/main\n^{B}\n"
        f"{B} refs/remotes/origin/../x\n{C} refs/tags/v1\nzz refs/heads/bad\n".encode()
    )
    assert packed == {"refs/remotes/origin/main": A, "refs/tags/v1": C}
    assert unpushed_work.parse_loose_ref(f"{B}\n".encode()) == B
    with pytest.raises(BadRepository):
        unpushed_work.parse_loose_ref(b"ref: refs/remotes/origin/main\n")


@pytest.mark.parametrize(
    ("ref", "valid"),
    [
        ("refs/remotes/origin/main", True),
        ("refs/heads/a..b", False),
        ("refs/heads/.hidden", False),
        ("refs/heads/x.lock", False),
        ("refs/heads/x y", False),
        ("refs/heads/x@{1}", False),
        ("heads/main", False),
    ],
)
def test_ref_names(ref: str, valid: bool) -> None:
    assert unpushed_work.is_ref_name(ref) is valid


def config(**entries: str | list[str]) -> dict[str, list[str]]:
    return {
        key.replace("__", "."): value if isinstance(value, list) else [value]
        for key, value in entries.items()
    }


def test_the_upstream_goes_through_the_remotes_fetch_refspec() -> None:
    default = config(
        branch__fix__remote="origin",
        branch__fix__merge="refs/heads/main",
        remote__origin__fetch="+refs/heads/*:refs/remotes/origin/*",
    )
    assert unpushed_work.upstream_ref("fix", default) == "refs/remotes/origin/main"
    explicit = config(
        branch__fix__remote="up",
        branch__fix__merge="refs/heads/release",
        remote__up__fetch=["+refs/heads/main:refs/remotes/up/main", "refs/heads/release:refs/x/r"],
    )
    assert unpushed_work.upstream_ref("fix", explicit) == "refs/x/r"
    local = config(branch__fix__remote=".", branch__fix__merge="refs/heads/main")
    assert unpushed_work.upstream_ref("fix", local) == "refs/heads/main"


def test_a_branch_without_tracking_or_a_matching_refspec_has_no_upstream() -> None:
    assert unpushed_work.upstream_ref("fix", {}) is None
    unmapped = config(
        branch__fix__remote="origin",
        branch__fix__merge="refs/heads/main",
        remote__origin__fetch="+refs/heads/stable:refs/remotes/origin/stable",
    )
    assert unpushed_work.upstream_ref("fix", unmapped) is None


def test_a_config_listing_and_a_foreign_object_format() -> None:
    listed = unpushed_work.parse_config_list(
        b"core.bare\nfalse\0remote.origin.fetch\n+a\0remote.origin.fetch\n+b\0"
    )
    assert listed == {"core.bare": ["false"], "remote.origin.fetch": ["+a", "+b"]}
    assert unpushed_work.object_format_problem({"extensions.objectformat": ["sha256"]})
    assert unpushed_work.object_format_problem({"extensions.objectformat": ["sha1"]}) is None


def test_the_raw_log_stream_is_read_commit_by_commit() -> None:
    raw = (
        f"{A}\0{B}\0\n:000000 100644 {'0' * 40} {C} A\0.github/workflows/ci.yml\0"
        f":100644 100644 {C} {C} M\0src/\nodd name\0{C}\0\n:100644 000000 {C} {'0' * 40} D\0"
        "README\0"
    ).encode()
    assert unpushed_work.parse_changes(raw) == [
        CommitChanges(A, ()),
        CommitChanges(B, (b".github/workflows/ci.yml", b"src/\nodd name")),
        CommitChanges(C, (b"README",)),
    ]
    with pytest.raises(BadRepository):
        unpushed_work.parse_changes(b"not-a-commit\0")


@pytest.mark.parametrize(
    ("path", "workflow"),
    [
        (b".github/workflows/ci.yml", True),
        (b".github/workflows/nested/deploy.yaml", True),
        (b".github/workflows/", False),
        (b".github/workflows.yml", False),
        (b".github/workflowsx/ci.yml", False),
        (b".GitHub/workflows/ci.yml", False),
        (b"sub/.github/workflows/ci.yml", False),
        (b".github/CODEOWNERS", False),
    ],
)
def test_workflow_paths_are_matched_exactly(path: bytes, workflow: bool) -> None:
    assert unpushed_work.is_workflow_path(path) is workflow


def test_the_workflow_commits_and_a_series_commits() -> None:
    changes = [
        CommitChanges(A, (b"src/a.py",)),
        CommitChanges(B, (b"docs/x", b".github/workflows/ci.yml")),
    ]
    assert unpushed_work.workflow_commits(changes) == [B]
    series = f"From {B} Mon Sep 17 00:00:00 2001\nSubject: x\n\nFrom {A} Mon Sep 17 00:00:00 2001\n"
    assert unpushed_work.series_commits(series.encode()) == [B, A]


@pytest.mark.parametrize(
    ("repo", "valid"),
    [
        ("service", True),
        ("src/service", True),
        ("a/b/c", False),
        ("artifacts", False),
        ("artifacts/x", False),
        ("x/.git", False),
        ("../etc", False),
        ("", False),
    ],
)
def test_repository_names_the_harvester_could_record(repo: str, valid: bool) -> None:
    assert unpushed_work.is_repository_name(repo) is valid


def test_stored_patches_take_their_paths_from_the_repository_name_only() -> None:
    records = [record(), record(repo="../escape"), record(repo="b/lib", workflow_patch=None)]
    assert unpushed_work.stored_patches(records) == [
        ("work/b/lib/unpushed.patch", PATCH),
        ("work/service/unpushed.patch", PATCH),
        ("work/service/workflow-changes.patch", WORKFLOW),
    ]


def plan(
    end: ArtifactBranch, entries: list[OutputEntry], work: list[RepositoryRecord]
) -> list[str]:
    context = RecoveryContext(phase_name="fix", last_message=MESSAGE, work=work)
    return [
        artifact.title for artifact in artifact_rule.plan_artifacts(entries, context, end).artifacts
    ]


def test_a_failed_phase_keeps_both_patches_beside_its_files() -> None:
    draft = OutputEntry(path="draft.md", kind=EntryKind.FILE, size=4)
    assert plan(ArtifactBranch.FAILED, [draft], [record()]) == [
        "draft.md (kept from a failed phase)",
        "work/service/unpushed.patch (kept from a failed phase)",
        "work/service/workflow-changes.patch (kept from a failed phase)",
    ]
    context = RecoveryContext(phase_name="fix", last_message=None, work=[record()])
    kept = artifact_rule.plan_artifacts([], context, ArtifactBranch.FAILED).artifacts
    assert [(a.size, a.kept_as, a.content) for a in kept] == [
        (120, "failed_phase", None),
        (60, "failed_phase", None),
    ]


def test_a_partial_phase_keeps_them_as_partial_and_a_completed_one_does_not_list_them() -> None:
    assert plan(ArtifactBranch.PARTIAL, [], [record(workflow_patch=None)]) == [
        "recovered-from-transcript.md (partial) [recovered from transcript]",
        "work/service/unpushed.patch (partial)",
    ]
    report = OutputEntry(path="report.md", kind=EntryKind.FILE, size=4)
    assert plan(ArtifactBranch.COMPLETING, [report], [record()]) == ["report.md"]
    assert plan(ArtifactBranch.RETRIED, [report], [record()]) == []


def test_r64_a_completed_phase_lists_the_patches_of_a_repository_whose_push_did_not_land() -> None:
    report = OutputEntry(path="report.md", kind=EntryKind.FILE, size=4)
    work = [record(), record(repo="docs", workflow_patch=None)]
    context = RecoveryContext(
        phase_name="fix", last_message=MESSAGE, work=work, unpushed=frozenset({"service"})
    )
    listed = artifact_rule.plan_artifacts([report], context, ArtifactBranch.COMPLETING)
    assert [(a.title, a.kept_as) for a in listed.artifacts] == [
        ("report.md", None),
        ("work/service/unpushed.patch", None),
        ("work/service/workflow-changes.patch", None),
    ]
    recovered = artifact_rule.plan_artifacts([], context, ArtifactBranch.COMPLETING)
    assert [a.path for a in recovered.artifacts] == [
        "recovered-from-transcript.md",
        "work/service/unpushed.patch",
        "work/service/workflow-changes.patch",
    ]


def test_an_output_file_with_a_patchs_path_wins_and_the_clash_is_warned() -> None:
    clash = OutputEntry(path="work/service/unpushed.patch", kind=EntryKind.FILE, size=9)
    context = RecoveryContext(phase_name="fix", last_message=None, work=[record()])
    result = artifact_rule.plan_artifacts([clash], context, ArtifactBranch.FAILED)
    assert [(a.path, a.size) for a in result.artifacts] == [
        ("work/service/unpushed.patch", 9),
        ("work/service/workflow-changes.patch", 60),
    ]
    assert result.warnings == [
        "work/service/unpushed.patch: an output file has this path; the patch is not listed"
    ]


def test_r31_names_the_branch_the_patches_and_what_could_not_be_saved() -> None:
    section = unpushed_work.work_section(
        [
            record(),
            record(
                repo="lib",
                branch=None,
                upstream=None,
                commits=0,
                workflow_commits=0,
                unpushed_patch=None,
                workflow_patch=None,
            ),
            record(
                repo="big",
                skipped="over 1000 commits are not pushed",
                unpushed_patch=None,
                workflow_patch=None,
            ),
        ]
    )
    assert section is not None
    assert section.startswith("## Where this phase's work stands\n")
    lines = section.splitlines()[2:]
    assert "on branch `fix`" in lines[0] and "2 commit(s) not on `origin/main`" in lines[0]
    assert "`work/service/unpushed.patch` (apply with `git am`)" in lines[0]
    assert "1 of them change `.github/workflows/`" in lines[0]
    assert "`work/service/workflow-changes.patch`" in lines[0]
    assert "detached HEAD" in lines[1] and "every commit is on a remote-tracking branch" in lines[1]
    assert lines[2].endswith("could not be saved: over 1000 commits are not pushed.")
    assert unpushed_work.work_section([]) is None
