"""The harvester: a native sidecar that keeps a phase's output directory in S3 (R28, R29).

It syncs every ``interval`` seconds while the agent runs, so that an OOM kill
or an eviction still leaves the latest files stored, and once more when it
receives SIGTERM (after the agent exits, or on cancellation). That last sync
is retried with backoff until it succeeds: a storage outage delays the phase
(the pod's grace period is long) but loses nothing. Only storage errors are
retried. A refusal for good from the credentials endpoint (a 4xx other than
408/429: asking again gets the same answer) ends the syncing at once: the
harvester records the reason in ``manifest.json`` (``failure``, never
``final``), which the operator puts in the phase's error, and exits non-zero;
so does a last sync that fails unexpectedly three times. A file that cannot
be read as a regular file (see
:mod:`agentjobs.adapters.output_dir`) is skipped and recorded, so one bad file
never holds up the last sync. Each sync ends by writing ``manifest.json`` (when
it changed); the last one is marked ``final`` and records the git repositories
under the workspace, their unpushed commits stored as patches (R52, see
:mod:`agentjobs.sidecars.work_scan`).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import signal
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentjobs.adapters import output_dir
from agentjobs.adapters.presigned_store import CredentialRefused, PresignedStore
from agentjobs.adapters.store_common import StorageError, content_type
from agentjobs.contract.artifacts import harvest, object_layout, unpushed_work
from agentjobs.kube import in_pod
from agentjobs.models.output import DEFAULT_HARVEST_LIMITS, HarvestLimits, OutputEntry
from agentjobs.models.storage import (
    ArtifactManifest,
    CheckoutRecord,
    ObjectLocation,
    RepositoryRecord,
    StoredPatch,
)
from agentjobs.runtime import backoff
from agentjobs.sidecars import work_handoff, work_scan

logger = logging.getLogger("agentjobs.harvester")
PARALLEL_UPLOADS = 4
MAX_FAILURES = 3
UPLOAD_BUFFER = 1024 * 1024
# The reason kept in the manifest: enough to name the refusal, never a long echo of a key.
MAX_FAILURE_CHARS = 500


class Harvester:
    def __init__(
        self,
        store: PresignedStore,
        *,
        directory: Path,
        bucket: str,
        attempt_root: str,
        limits: HarvestLimits = DEFAULT_HARVEST_LIMITS,
        workspace: Path = Path(in_pod.WORKSPACE),
        work_limits: unpushed_work.WorkLimits = unpushed_work.DEFAULT_LIMITS,
        checkouts_file: Path = Path(in_pod.CHECKOUTS_FILE),
        credentials_root: Path = Path(in_pod.GIT_CREDENTIALS),
    ) -> None:
        self._store = store
        self._directory = directory
        self._workspace = workspace
        self._work_limits = work_limits
        self._work: list[RepositoryRecord] | None = None
        self._checkouts_file = checkouts_file
        self._credentials_root = credentials_root
        self._checkouts: list[CheckoutRecord] | None = None
        self._bucket = bucket
        self._root = attempt_root
        self._limits = limits
        self._uploaded: dict[str, harvest.Uploaded] = {}
        self._last_manifest: bytes | None = None
        self._last_entries: ArtifactManifest = ArtifactManifest()
        self.stopping = threading.Event()
        # Why the last sync could not be made, once it will not be retried (None: it was).
        self.failure: str | None = None

    def _location(self, path: str) -> ObjectLocation:
        return ObjectLocation(self._bucket, object_layout.output_key(self._root, path))

    def _upload(self, root: int, entry: OutputEntry) -> str | None:
        """Store one file from the descriptor opened beneath ``root``; why not, if not."""
        location = self._location(entry.path)
        try:
            with output_dir.open_file(root, entry.path) as (descriptor, info):
                if info.st_size > self._limits.max_file_bytes:
                    return (
                        f"grew to {info.st_size} bytes, over the cap of "
                        f"{self._limits.max_file_bytes} bytes per file; not stored"
                    )
                reader = output_dir.FileReader(descriptor, info.st_size)
                media_type = content_type(entry.path)
                try:
                    stream = io.BufferedReader(reader, UPLOAD_BUFFER)
                    self._store.put_stream(
                        location, stream, size=info.st_size, media_type=media_type
                    )
                except (StorageError, OSError):
                    if reader.problem is not None:
                        return reader.problem  # the file's fault: skip it, retry nothing
                    raise
                self._uploaded[entry.path] = harvest.Uploaded(
                    info.st_size, info.st_mtime_ns, reader.digest.hexdigest(), media_type
                )
                return None
        except output_dir.FileProblem as problem:
            return str(problem)

    def _upload_all(self, root: int, plan: harvest.SyncPlan) -> dict[str, str]:
        unreadable: dict[str, str] = {}
        # One request for the URLs of many files, not one per file.
        self._store.prepare("PUT", [self._location(entry.path) for entry in plan.to_upload])
        with ThreadPoolExecutor(PARALLEL_UPLOADS) as pool:
            jobs = {entry.path: pool.submit(self._upload, root, entry) for entry in plan.to_upload}
            for path, job in jobs.items():
                if (reason := job.result()) is not None:
                    unreadable[path] = reason
                    self._uploaded.pop(path, None)
                    logger.warning("skipped %s: %s", path, reason)
        return unreadable

    def sync(self, *, final: bool) -> int:
        """Upload what changed and write the manifest; how many files were uploaded."""
        try:
            root = output_dir.open_root(self._directory)
        except output_dir.NotADirectory as error:
            logger.info("nothing to harvest: %s", error)
            plan = harvest.plan_sync([], self._uploaded, self._limits)
            self._write_manifest(harvest.manifest(plan, {}, final=final), final=final)
            return 0
        try:
            plan = harvest.plan_sync(output_dir.list_open(root), self._uploaded, self._limits)
            unreadable = self._upload_all(root, plan)
        finally:
            os.close(root)
        manifest = harvest.manifest(plan, self._uploaded, final=final, unreadable=unreadable)
        self._write_manifest(manifest, final=final)
        return len(plan.to_upload) - len(unreadable)

    def _store_patch(self, repo: str, name: str, path: Path) -> StoredPatch:
        location = ObjectLocation(
            self._bucket,
            object_layout.work_key(self._root, unpushed_work.patch_path(repo, name)),
        )
        digest = hashlib.sha256()
        with open(path, "rb") as patch:
            size = os.fstat(patch.fileno()).st_size
            self._store.put_stream(location, patch, size=size, media_type="text/x-patch")
            patch.seek(0)
            while chunk := patch.read(UPLOAD_BUFFER):
                digest.update(chunk)
        return StoredPatch(size=size, sha256=digest.hexdigest())

    def _stored_work(self) -> list[RepositoryRecord]:
        """R52, once per harvester: each repository's record, its patches stored."""
        if self._work is None:
            records = []
            with tempfile.TemporaryDirectory(prefix="agentjobs-work-") as scratch:
                for found in work_scan.scan(self._workspace, Path(scratch), self._work_limits):
                    stored = {}
                    for field, name, path in (
                        ("unpushed_patch", unpushed_work.UNPUSHED_PATCH, found.unpushed),
                        ("workflow_patch", unpushed_work.WORKFLOW_PATCH, found.workflow),
                    ):
                        if path is not None:
                            stored[field] = self._store_patch(found.record.repo, name, path)
                    records.append(found.record.model_copy(update=stored))
            self._work = records
        return self._work

    def _handed_off(self) -> list[CheckoutRecord]:
        """R63, R64, once per harvester: each checkout's bundle stored and its push made."""
        if self._checkouts is None:
            with tempfile.TemporaryDirectory(prefix="agentjobs-handoff-") as scratch:
                self._checkouts = work_handoff.hand_off(
                    self._checkouts_file,
                    workspace=self._workspace,
                    scratch=Path(scratch),
                    credentials_root=self._credentials_root,
                    limits=self._work_limits,
                    store=self._store_patch,
                )
        return self._checkouts

    def _with_work(self, manifest: ArtifactManifest) -> ArtifactManifest:
        try:
            work = self._stored_work()
        except StorageError:
            raise  # the final sync is retried
        except Exception:
            # Unpushed work is saved at best: a bug here must not cost the output (R28).
            logger.exception("looking for unpushed work failed; the output is stored without it")
            work = []
        try:
            checkouts = self._handed_off()
        except StorageError:
            raise
        except Exception:
            logger.exception("handing the repositories' work on failed; stored without it")
            checkouts = []
        return manifest.model_copy(update={"work": work, "checkouts": checkouts})

    def _write_manifest(self, manifest: ArtifactManifest, *, final: bool) -> None:
        if final:
            manifest = self._with_work(manifest)
        # Compact: with tens of thousands of entries every byte per entry counts.
        data = manifest.model_dump_json(by_alias=True, exclude_defaults=True).encode()
        if data != self._last_manifest or final:
            self._store.put_bytes(
                ObjectLocation(self._bucket, object_layout.manifest_key(self._root)),
                data,
                media_type="application/json",
            )
            self._last_manifest = data
            self._last_entries = manifest

    def _give_up(self, reason: str, *, final: bool) -> None:
        """Stop retrying; at the last sync, record why in the manifest (if it can be written)."""
        self.failure = reason[:MAX_FAILURE_CHARS]
        if not final:
            return
        failed = self._last_entries.model_copy(update={"final": False, "failure": self.failure})
        try:
            self._write_manifest(failed, final=False)
        except (StorageError, CredentialRefused) as error:
            logger.error("could not record the failure in the manifest: %s", error)

    def _retrying(self, *, final: bool) -> None:
        """One sync; storage errors are retried (the last sync until it succeeds), a refusal
        for good and a third unexpected failure are not."""
        delays = backoff.HARVEST.delays()
        failures = 0
        while True:
            try:
                uploaded = self.sync(final=final)
                logger.info(
                    "%s sync: %d file(s) uploaded", "final" if final else "periodic", uploaded
                )
                self.failure = None
                return
            except StorageError as error:
                logger.warning("sync failed: %s; retrying", error)
            except CredentialRefused as error:
                logger.error("sync refused, not retried: %s", error)
                self._give_up(f"the sync was refused: {error}", final=final)
                return
            except Exception as error:
                # A bug, not storage: never a crash loop, and never a retry for ever.
                failures += 1
                logger.exception("sync failed unexpectedly (%d of %d)", failures, MAX_FAILURES)
                if failures >= MAX_FAILURES:
                    if final:
                        reason = f"the sync failed unexpectedly: {type(error).__name__}"
                        self._give_up(reason, final=final)
                    return
            delay = next(delays)
            if final:
                time.sleep(delay)
            elif self.stopping.wait(delay):
                return  # SIGTERM: go straight to the final sync

    def run(self, *, interval: float) -> None:
        while not self.stopping.is_set():
            if self.failure is None:  # once refused, only the last sync asks again
                self._retrying(final=False)
            self.stopping.wait(interval)
        self._retrying(final=True)


STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def run(harvester: Harvester, *, interval: float, ready_file: Path | None) -> bool:
    """Run until SIGTERM, then sync one last time; whether that last sync was made.

    The signal is taken by a thread of its own (every thread blocks it, that one waits for
    it), not by a handler: a handler setting ``stopping`` while the main thread held the
    Event's lock, in its wait, blocked for ever on that lock, and the pod with it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    threading.Thread(target=_stop_on_signal, args=(harvester.stopping,), daemon=True).start()
    if ready_file is not None:
        ready_file.parent.mkdir(parents=True, exist_ok=True)
        ready_file.touch()
    harvester.run(interval=interval)
    return harvester.failure is None


def _stop_on_signal(stopping: threading.Event) -> None:
    signal.sigwait(STOP_SIGNALS)
    stopping.set()
