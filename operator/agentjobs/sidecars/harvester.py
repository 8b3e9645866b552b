"""The harvester: a native sidecar that keeps a phase's output directory in S3 (R28, R29).

It syncs every ``interval`` seconds while the agent runs, so that an OOM kill
or an eviction still leaves the latest files stored, and once more when it
receives SIGTERM (after the agent exits, or on cancellation). That last sync
is retried with backoff until it succeeds: a storage outage delays the phase
(the pod's grace period is long) but loses nothing. Each sync ends by writing
``manifest.json``; the last one is marked ``final``.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType

from agentjobs.adapters import output_dir
from agentjobs.adapters.object_store import ObjectStore, StorageError, content_type
from agentjobs.logic import harvest, object_layout
from agentjobs.models.output import OutputEntry
from agentjobs.models.storage import ObjectLocation

logger = logging.getLogger("agentjobs.harvester")
PARALLEL_UPLOADS = 4
MAX_BACKOFF_SECONDS = 5.0


class Harvester:
    def __init__(
        self, store: ObjectStore, *, directory: Path, bucket: str, attempt_root: str
    ) -> None:
        self._store = store
        self._directory = directory
        self._bucket = bucket
        self._root = attempt_root
        self._uploaded: dict[str, harvest.Uploaded] = {}
        self._bucket_ready = False
        self.stopping = threading.Event()

    def _listing(self) -> list[OutputEntry]:
        try:
            return output_dir.list_output(self._directory)
        except output_dir.NotADirectory:
            return []

    def _upload(self, entry: OutputEntry) -> None:
        location = ObjectLocation(self._bucket, object_layout.output_key(self._root, entry.path))
        sha256 = self._store.put_file(location, self._directory / entry.path, size=entry.size)
        self._uploaded[entry.path] = harvest.Uploaded(
            entry.size, entry.modified_ns, sha256, content_type(entry.path)
        )

    def sync(self, *, final: bool) -> int:
        """Upload what changed and write the manifest; how many files were uploaded."""
        plan = harvest.plan_sync(self._listing(), self._uploaded)
        with ThreadPoolExecutor(PARALLEL_UPLOADS) as pool:
            for result in [pool.submit(self._upload, entry) for entry in plan.to_upload]:
                result.result()
        manifest = harvest.manifest(plan, self._uploaded, final=final)
        self._store.put_bytes(
            ObjectLocation(self._bucket, object_layout.manifest_key(self._root)),
            manifest.model_dump_json(by_alias=True, indent=1).encode(),
            media_type="application/json",
        )
        return len(plan.to_upload)

    def _retrying(self, *, final: bool) -> None:
        backoff = 0.5
        while True:
            try:
                if not self._bucket_ready:
                    self._store.ensure_bucket(self._bucket)
                    self._bucket_ready = True
                uploaded = self.sync(final=final)
                logger.info(
                    "%s sync: %d file(s) uploaded", "final" if final else "periodic", uploaded
                )
                return
            except (StorageError, OSError) as error:
                logger.warning("sync failed: %s; retrying in %.1f s", error, backoff)
            if final:
                time.sleep(backoff)
            elif self.stopping.wait(backoff):
                return  # SIGTERM: go straight to the final sync
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    def run(self, *, interval: float) -> None:
        while not self.stopping.is_set():
            self._retrying(final=False)
            self.stopping.wait(interval)
        self._retrying(final=True)


def run(harvester: Harvester, *, interval: float, ready_file: Path | None) -> None:
    """Run until SIGTERM, then sync one last time."""

    def stop(signum: int, frame: FrameType | None) -> None:
        harvester.stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if ready_file is not None:
        ready_file.parent.mkdir(parents=True, exist_ok=True)
        ready_file.touch()
    harvester.run(interval=interval)
