"""The harvester's syncs over real hostile trees, with an in-memory store (R28, issue 15).

Cases: one sync over a FIFO, a socket, a symlink to /proc/self, a non-UTF-8
name and an unreadable file stores only the regular files, from the opened
descriptor, and records every other entry as skipped with its reason; the
caps skip files past the count, the per-file and per-phase bytes (a 5 GiB
sparse file is never read); a storage error is retried, a file that fails
while read is skipped and never retried; an unchanged manifest is not
written again; the final sync of an unreadable file ends (as nobody). A refusal for good
from the credentials endpoint (issue 21: a 413) is not retried: the periodic syncs stop
asking, the last sync asks once, records the reason in a manifest that is not final and
the harvester reports failure (its command exits 1); a last sync made after all succeeds.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import IO

import pytest

from agentjobs.adapters.presigned_store import CredentialRefused
from agentjobs.adapters.store_common import StorageError
from agentjobs.models.output import DEFAULT_HARVEST_LIMITS, GIB, HarvestLimits
from agentjobs.models.storage import ArtifactManifest, ObjectLocation
from agentjobs.sidecars import harvester
from tests.unit import other_user

ROOT = "ns/run/0-draft/attempt-1"


class MemoryStore:
    """The store's methods the harvester calls, keeping objects in a dict."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.manifest_writes = 0
        self.fail_uploads = 0
        self.before_read: list[Path] = []
        self.url_requests = 0
        self.refuse_urls = 0

    def ensure_bucket(self, bucket: str) -> None:
        pass

    def prepare(self, method: str, locations: list[ObjectLocation]) -> None:
        # A presigning store asks for its URLs here.
        self.url_requests += 1
        if self.refuse_urls:
            self.refuse_urls -= 1
            raise CredentialRefused("credentials endpoint refused the request: HTTP 413")

    def put_stream(
        self, location: ObjectLocation, stream: IO[bytes], *, size: int, media_type: str
    ) -> None:
        for path in self.before_read:
            os.truncate(path, 1)
        if self.fail_uploads:
            self.fail_uploads -= 1
            raise StorageError("the store is down")
        try:
            data = stream.read(size)
        except OSError as error:
            raise StorageError(f"upload of {location.url}: {error}") from error
        assert len(data) == size
        self.objects[location.key] = data

    def put_bytes(self, location: ObjectLocation, data: bytes, *, media_type: str) -> None:
        self.objects[location.key] = data
        self.manifest_writes += location.key.endswith("manifest.json")

    def manifest(self) -> ArtifactManifest:
        return ArtifactManifest.model_validate_json(self.objects[f"{ROOT}/manifest.json"])


def make(
    store: MemoryStore, directory: Path, limits: HarvestLimits = DEFAULT_HARVEST_LIMITS
) -> harvester.Harvester:
    return harvester.Harvester(
        store,  # type: ignore[arg-type]
        directory=directory,
        bucket="b",
        attempt_root=ROOT,
        limits=limits,
    )


def skipped(store: MemoryStore) -> dict[str, str | None]:
    return {e.path: e.skipped for e in store.manifest().entries if not e.uploaded}


def test_only_regular_files_are_stored_and_every_other_entry_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.md").write_text("the report")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "proc").symlink_to("/proc/self", target_is_directory=True)
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff", os.O_CREAT | os.O_WRONLY))
    monkeypatch.chdir(tmp_path)
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        store = MemoryStore()
        make(store, tmp_path).sync(final=True)
    assert set(store.objects) == {f"{ROOT}/output/report.md", f"{ROOT}/manifest.json"}
    assert store.objects[f"{ROOT}/output/report.md"] == b"the report"
    assert skipped(store) == {
        "bad\\xff": "its name is not UTF-8; not read",
        "pipe": "a FIFO (named pipe); not read",
        "proc": "a symlink; not followed",
        "sock": "a socket; not read",
    }
    assert store.manifest().final


def test_files_past_the_caps_are_skipped_with_the_cap_they_pass(tmp_path: Path) -> None:
    for name, size in [("f0", 1), ("f1", 2), ("f2", 3), ("g", 1), ("h", 1)]:
        (tmp_path / name).write_text("x" * size)
    with (tmp_path / "a-huge.bin").open("wb") as sparse:
        sparse.truncate(5 * GIB)  # sparse: reading it would take minutes
    store = MemoryStore()
    limits = HarvestLimits(max_files=3, max_file_bytes=1024, max_phase_bytes=4)
    make(store, tmp_path, limits).sync(final=True)
    stored = sorted(key.rsplit("/", 1)[1] for key in store.objects)
    assert stored == ["f0", "f1", "g", "manifest.json"]
    assert skipped(store) == {
        "a-huge.bin": f"{5 * GIB} bytes, over the cap of 1024 bytes per file; not stored",
        "f2": "3 bytes would pass the cap of 4 bytes per phase; not stored",
        "h": "over the cap of 3 files per phase; not stored",
    }


def test_a_storage_error_is_retried_and_the_file_stored(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("the report")
    store = MemoryStore()
    store.fail_uploads = 1
    worker = make(store, tmp_path)
    worker.stopping.set()
    worker.run(interval=0)
    assert store.objects[f"{ROOT}/output/report.md"] == b"the report"
    assert store.manifest().final


def test_a_file_that_fails_while_read_is_skipped_not_retried(tmp_path: Path) -> None:
    (tmp_path / "shrinks.md").write_text("0123456789")
    store = MemoryStore()
    store.before_read = [tmp_path / "shrinks.md"]
    worker = make(store, tmp_path)
    finished = threading.Thread(target=lambda: worker._retrying(final=True))
    finished.start()
    finished.join(timeout=10)
    assert not finished.is_alive(), "the final sync retried a file's own failure"
    assert skipped(store) == {"shrinks.md": "it shrank while it was read; not stored"}


def test_an_unchanged_manifest_is_not_written_again(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("the report")
    store = MemoryStore()
    worker = make(store, tmp_path)
    worker.sync(final=False)
    worker.sync(final=False)
    assert store.manifest_writes == 1
    worker.sync(final=True)
    assert store.manifest_writes == 2


def test_the_final_sync_of_an_unreadable_file_ends_and_records_it() -> None:
    with other_user.shared_directory() as tree:
        _final_sync_of_an_unreadable_file(tree)


def _final_sync_of_an_unreadable_file(tree: Path) -> None:
    (tree / "secret.md").write_text("root only")
    (tree / "secret.md").chmod(0o600)
    (tree / "open.md").write_text("anyone")

    def final_sync_as_nobody() -> object:
        store = MemoryStore()
        worker = make(store, tree)
        worker.stopping.set()
        worker.run(interval=0)
        return [sorted(store.objects), skipped(store)]

    assert other_user.as_nobody(final_sync_as_nobody) == [
        [f"{ROOT}/manifest.json", f"{ROOT}/output/open.md"],
        {"secret.md": "unreadable (permission denied)"},
    ]


class SigtermAfter(threading.Event):
    """The harvester's stop flag, set (as SIGTERM sets it) after this many waits."""

    def __init__(self, waits: int) -> None:
        super().__init__()
        self.waits = waits

    def wait(self, timeout: float | None = None) -> bool:
        self.waits -= 1
        if self.waits <= 0:
            self.set()
        return self.is_set()


def test_a_refusal_for_good_is_not_retried_and_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("the report")
    store = MemoryStore()
    store.refuse_urls = 1_000
    worker = make(store, tmp_path)
    worker.stopping = SigtermAfter(3)  # three periodic intervals, then SIGTERM
    worker.run(interval=0)
    assert worker.failure is not None  # `agentjobs harvest` exits 1 saying it
    assert store.url_requests == 2  # the first periodic sync, then the last one: once each
    manifest = store.manifest()
    assert not manifest.final
    assert manifest.failure == (
        "the sync was refused: credentials endpoint refused the request: HTTP 413"
    )
    assert f"{ROOT}/output/report.md" not in store.objects


def test_a_last_sync_made_after_a_refused_periodic_one_succeeds(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("the report")
    store = MemoryStore()
    store.refuse_urls = 1
    worker = make(store, tmp_path)
    worker.stopping = SigtermAfter(3)
    worker.run(interval=0)
    assert worker.failure is None
    assert store.url_requests == 2
    assert store.manifest().final and store.manifest().failure is None
    assert store.objects[f"{ROOT}/output/report.md"] == b"the report"
