"""The harvester's plan and manifest, object names, and storage settings (R28, R29, R35).

Cases: only new or changed files are uploaded; under the file cap non-empty
files are taken before empty ones (R57); the manifest records stored,
empty and skipped entries and lists the directory back for the artifact
rule; object keys follow the browsable layout and refuse unsafe paths and
prefixes; s3:// URLs parse; settings come from the environment and never
show the credentials.
"""

from __future__ import annotations

import pytest

from agentjobs.adapters.object_store import StorageNotConfigured, StorageSettings
from agentjobs.adapters.store_common import StorageError
from agentjobs.contract.artifacts import harvest, object_layout
from agentjobs.contract.artifacts.handoff import UnsafeArtifactPath
from agentjobs.models.output import EntryKind, HarvestLimits, OutputEntry
from agentjobs.models.storage import ObjectLocation


def file(path: str, size: int = 3, modified: int = 1) -> OutputEntry:
    return OutputEntry(path=path, kind=EntryKind.FILE, size=size, modified_ns=modified)


LISTING = [
    file("a.txt"),
    file("empty.md", 0),
    file("__pycache__/m.pyc"),
    OutputEntry(path="link", kind=EntryKind.SYMLINK),
]


def test_r28_a_first_sync_uploads_every_collectable_file() -> None:
    plan = harvest.plan_sync(LISTING, {})
    assert [entry.path for entry in plan.to_upload] == ["a.txt"]
    assert [entry.path for entry in plan.empty] == ["empty.md"]


def test_only_files_changed_since_their_upload_are_uploaded_again() -> None:
    uploaded = {"a.txt": harvest.Uploaded(3, 1, "00" * 32, "text/plain")}
    assert harvest.plan_sync(LISTING, uploaded).to_upload == []
    assert [e.path for e in harvest.plan_sync([file("a.txt", 4)], uploaded).to_upload] == ["a.txt"]
    touched = [file("a.txt", modified=2)]
    assert [e.path for e in harvest.plan_sync(touched, uploaded).to_upload] == ["a.txt"]


def test_r57_empty_files_never_take_the_file_cap_from_a_deliverable() -> None:
    empties = [file(f"a/{index:05}.txt", 0) for index in range(10_050)]
    listing = [*empties, file("z/report.md", 10)]
    plan = harvest.plan_sync(listing, {}, HarvestLimits(max_files=10_000))
    assert [entry.path for entry in plan.to_upload] == ["z/report.md"]
    assert len(plan.empty) == 9_999
    over = [s for s in plan.skipped if "over the cap of 10000 files" in s.reason]
    assert [s.path for s in over] == [e.path for e in empties[9_999:]]


def test_r28_r29_the_manifest_records_stored_empty_and_skipped_entries() -> None:
    uploaded = {"a.txt": harvest.Uploaded(3, 1, "ab" * 32, "text/plain")}
    manifest = harvest.manifest(harvest.plan_sync(LISTING, uploaded), uploaded, final=True)
    entries = {entry.path: entry for entry in manifest.entries}
    assert entries["a.txt"].uploaded and entries["a.txt"].sha256 == "ab" * 32
    assert (entries["empty.md"].uploaded, entries["empty.md"].size) == (False, 0)
    assert entries["link"].kind is EntryKind.SYMLINK
    assert entries["link"].skipped == "symlink, not followed"
    assert entries["__pycache__/m.pyc"].skipped == "inside a build-junk directory"
    assert manifest.final
    listed = {(e.path, e.kind, e.size) for e in harvest.listing(manifest)}
    assert ("a.txt", EntryKind.FILE, 3) in listed
    assert ("link", EntryKind.SYMLINK, 0) in listed


def test_object_keys_follow_the_browsable_layout() -> None:
    root = object_layout.execution_root(prefix="team/x/", namespace="ns", execution="demo")
    attempt = object_layout.attempt_root(execution_root=root, index=1, phase="build", attempt=2)
    assert attempt == "team/x/namespaces/ns/executions/demo/1-build/attempt-2"
    assert object_layout.output_key(attempt, "src/a.py") == f"{attempt}/output/src/a.py"
    assert object_layout.manifest_key(attempt) == f"{attempt}/manifest.json"
    assert object_layout.transcript_key(attempt) == f"{attempt}/transcript.log"
    without = object_layout.execution_root(prefix=None, namespace="ns", execution="demo")
    assert without == "namespaces/ns/executions/demo"


def test_no_prefix_puts_one_tenants_objects_under_anothers_root() -> None:
    victim = object_layout.execution_root(prefix=None, namespace="b", execution="demo")
    inside = f"{victim}/0-x/attempt-1/output"
    with pytest.raises(ValueError, match="invalid artifact prefix"):
        object_layout.execution_root(prefix=inside, namespace="a", execution="demo")
    # A namespace named like a victim's execution path still lands apart.
    attacker = object_layout.execution_root(prefix="b", namespace="demo", execution="0-x")
    assert not attacker.startswith(victim + "/") and not victim.startswith(attacker + "/")


def test_r28_an_unsafe_path_or_prefix_is_refused() -> None:
    with pytest.raises(UnsafeArtifactPath):
        object_layout.output_key("root", "../other/secret")
    with pytest.raises(ValueError, match="invalid artifact prefix"):
        object_layout.execution_root(prefix="../ns2", namespace="ns", execution="demo")


def test_s3_urls_parse_and_print_back() -> None:
    location = ObjectLocation.parse("s3://bucket/a/b.txt")
    assert (location.bucket, location.key, location.url) == (
        "bucket",
        "a/b.txt",
        "s3://bucket/a/b.txt",
    )
    with pytest.raises(ValueError):
        ObjectLocation.parse("https://bucket/a")


def test_storage_settings_come_from_the_environment_and_hide_the_keys() -> None:
    settings = StorageSettings.from_environment(
        {
            "AGENTJOBS_S3_ENDPOINT": "https://s3.example:9000/",
            "AGENTJOBS_S3_ACCESS_KEY": "AK",
            "AGENTJOBS_S3_SECRET_KEY": "SECRET",
        }
    )
    assert (settings.endpoint, settings.bucket) == ("https://s3.example:9000", "agentjobs")
    assert "SECRET" not in repr(settings)
    assert "SECRET" not in str(settings.public_environment())
    with pytest.raises(StorageNotConfigured):
        StorageSettings.from_environment({})
    with pytest.raises(StorageError, match="http"):
        StorageSettings.from_environment({"AGENTJOBS_S3_ENDPOINT": "ftp://x"})
