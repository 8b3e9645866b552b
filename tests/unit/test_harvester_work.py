"""The harvester's last sync stores unpushed work (R52), with an in-memory store.

Cases: a periodic sync records no repositories; the final sync stores both
patches under ``work/<repo>/`` beside ``output/`` and records them (size,
SHA-256) in the manifest, and the operator finds them at the same keys; a
failure inside the scan costs the work only, never the output.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentjobs.services.phase_storage import StoredObject, stored_work
from agentjobs.sidecars import harvester, work_scan
from tests.unit.test_git_repos import clone, commit, git
from tests.unit.test_harvester import ROOT, MemoryStore


def make(store: MemoryStore, workspace: Path) -> harvester.Harvester:
    output = workspace / "artifacts" / "output"
    output.mkdir(parents=True)
    (output / "notes.md").write_text("notes")
    return harvester.Harvester(
        store,  # type: ignore[arg-type]
        directory=output,
        bucket="b",
        attempt_root=ROOT,
        workspace=workspace,
    )


def test_the_final_sync_stores_the_patches_and_records_them(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit(seed, {"README.md": "base\n"}, "Base")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    repo = clone(seed, workspace)
    commit(repo, {".github/workflows/ci.yml": "on: push\n", "a.py": "1\n"}, "Work")
    store = MemoryStore()
    worker = make(store, workspace)
    worker.sync(final=False)
    assert store.manifest().work == []
    worker.sync(final=True)
    [record] = store.manifest().work
    assert (record.repo, record.branch, record.upstream, record.commits) == (
        "service",
        "main",
        "origin/main",
        1,
    )
    unpushed = store.objects[f"{ROOT}/work/service/unpushed.patch"]
    workflow = store.objects[f"{ROOT}/work/service/workflow-changes.patch"]
    assert record.unpushed_patch is not None and record.workflow_patch is not None
    assert record.unpushed_patch.sha256 == hashlib.sha256(unpushed).hexdigest()
    assert record.workflow_patch.size == len(workflow)
    assert f"{ROOT}/output/notes.md" in store.objects
    assert stored_work("b", ROOT, [record]) == {
        "work/service/unpushed.patch": StoredObject(
            f"s3://b/{ROOT}/work/service/unpushed.patch", record.unpushed_patch.sha256
        ),
        "work/service/workflow-changes.patch": StoredObject(
            f"s3://b/{ROOT}/work/service/workflow-changes.patch", record.workflow_patch.sha256
        ),
    }


def test_a_failing_scan_costs_the_work_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> list[work_scan.FoundWork]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(work_scan, "scan", broken)
    store = MemoryStore()
    make(store, tmp_path / "workspace").sync(final=True)
    assert store.manifest().final is True and store.manifest().work == []
    assert store.objects[f"{ROOT}/output/notes.md"] == b"notes"
