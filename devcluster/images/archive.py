"""OCI archives: one image in an OCI layout, tarred, listed once under each of its names.

`ctr images import` names an image by the index's `io.containerd.image.name` annotation
(else by `org.opencontainers.image.ref.name`); buildah finds it by the latter. Both are set to
the full reference, so what the node's containerd holds is exactly what pods ask for."""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any


def index_for(manifest: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The index of an archive holding the image of `manifest` (a descriptor) under `names`."""
    descriptor = {key: manifest[key] for key in ("mediaType", "digest", "size")}
    return {
        "schemaVersion": 2,
        "manifests": [
            {
                **descriptor,
                "annotations": {
                    "io.containerd.image.name": name,
                    "org.opencontainers.image.ref.name": name,
                },
            }
            for name in names
        ],
    }


def _add(archive: tarfile.TarFile, name: str, data: bytes | Path | None) -> None:
    # Fixed owner, mode and time: the same image always packs into the same bytes.
    info = tarfile.TarInfo(name)
    info.mtime = 0
    if data is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        archive.addfile(info)
    elif isinstance(data, Path):
        info.size = data.stat().st_size
        info.mode = 0o644
        with data.open("rb") as blob:
            archive.addfile(info, blob)
    else:
        info.size = len(data)
        info.mode = 0o644
        archive.addfile(info, io.BytesIO(data))


def pack(layout: Path, names: Sequence[str], destination: Path) -> None:
    """Tar the one-image OCI layout `layout` (as `buildah push ... oci:` writes it) into
    `destination`, atomically, under `names`."""
    manifests = json.loads((layout / "index.json").read_text())["manifests"]
    if len(manifests) != 1:
        raise ValueError(f"{layout} holds {len(manifests)} images, not one")
    index = index_for(manifests[0], names)
    partial = destination.with_name(destination.name + ".partial")
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as archive:
        _add(archive, "oci-layout", (layout / "oci-layout").read_bytes())
        _add(archive, "index.json", json.dumps(index, indent=2).encode())
        _add(archive, "blobs", None)
        _add(archive, "blobs/sha256", None)
        for blob in sorted((layout / "blobs" / "sha256").iterdir()):
            _add(archive, f"blobs/sha256/{blob.name}", blob)
    os.replace(partial, destination)


def image_id(archive_path: Path) -> str:
    """The ID of the image an archive written by `pack` holds: its config's digest, which
    buildah's storage calls the image's ID too."""
    with tarfile.open(archive_path) as archive:
        index = json.load(_read(archive, "index.json"))
        digest = index["manifests"][0]["digest"].removeprefix("sha256:")
        manifest = json.load(_read(archive, f"blobs/sha256/{digest}"))
    return str(manifest["config"]["digest"]).removeprefix("sha256:")


def _read(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    member = archive.extractfile(name)
    if member is None:
        raise ValueError(f"no {name} in the archive")
    return member
