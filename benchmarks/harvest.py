"""Harvest throughput beside a plain ``fput_object`` loop, on the same files and S3 server.

Writes 1 GB in 1,000 files, uploads them once with the ``minio`` client's own
``fput_object`` in a loop (the floor for our overhead) and once with the
harvester's sync (SHA-256 of every byte, manifest, parallel uploads), then
prints both throughputs and their ratio, in one run. Needs the local S3
server (``python -m devcluster up``; ``eval "$(python -m devcluster env)"``).

    python benchmarks/harvest.py [--files 1000] [--file-mb 1]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path

from minio import Minio

from agentjobs.adapters.object_store import ObjectStore, StorageSettings
from agentjobs.sidecars.harvester import Harvester


def write_files(directory: Path, count: int, size: int) -> int:
    block = os.urandom(size)
    for index in range(count):
        folder = directory / f"part-{index // 100:02d}"
        folder.mkdir(exist_ok=True)
        # Distinct contents without paying for 1 GB of fresh randomness.
        (folder / f"file-{index:04d}.bin").write_bytes(index.to_bytes(8, "big") + block[8:])
    return count * size


def fput_loop(client: Minio, bucket: str, prefix: str, directory: Path) -> None:
    for path in sorted(directory.rglob("*.bin")):
        client.fput_object(bucket, f"{prefix}/{path.relative_to(directory)}", str(path))


def remove(client: Minio, bucket: str, prefix: str) -> None:
    from minio.deleteobjects import DeleteObject

    names = [o.object_name for o in client.list_objects(bucket, prefix=prefix, recursive=True)]
    for error in client.remove_objects(bucket, (DeleteObject(n) for n in names if n)):
        print("cleanup:", error)


def main(files: int, file_mb: int) -> None:
    settings = StorageSettings.from_environment()
    store = ObjectStore(settings)
    store.ensure_bucket(settings.bucket)
    client = Minio(
        settings.endpoint.split("://", 1)[1],
        access_key=settings.access_key,
        secret_key=settings.secret_key,
        secure=settings.endpoint.startswith("https"),
    )
    run = f"bench-harvest-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        total = write_files(directory, files, file_mb * 1024 * 1024)
        megabytes = total / 1e6

        start = time.perf_counter()
        fput_loop(client, settings.bucket, f"{run}/fput", directory)
        fput_seconds = time.perf_counter() - start

        harvester = Harvester(
            store, directory=directory, bucket=settings.bucket, attempt_root=f"{run}/harvest"
        )
        start = time.perf_counter()
        uploaded = harvester.sync(final=True)
        harvest_seconds = time.perf_counter() - start
        assert uploaded == files, uploaded
    remove(client, settings.bucket, run)
    fput_rate, harvest_rate = megabytes / fput_seconds, megabytes / harvest_seconds
    print(f"{files} files, {megabytes:.0f} MB, to {settings.endpoint}")
    print(f"minio fput_object loop: {fput_rate:7.0f} MB/s  ({fput_seconds:.1f} s)")
    print(f"agentjobs harvester:    {harvest_rate:7.0f} MB/s  ({harvest_seconds:.1f} s)")
    print(f"ratio (harvester / fput_object loop): {harvest_rate / fput_rate:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--file-mb", type=int, default=1)
    arguments = parser.parse_args()
    main(arguments.files, arguments.file_mb)
