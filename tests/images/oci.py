"""Reading an image archive as a node would: its index, its config, its layers unpacked."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import IO, Any


def _member(archive: tarfile.TarFile, name: str) -> IO[bytes]:
    member = archive.extractfile(name)
    assert member is not None, name
    return member


def _blob(archive: tarfile.TarFile, digest: str) -> IO[bytes]:
    return _member(archive, f"blobs/sha256/{digest.removeprefix('sha256:')}")


def read(archive_path: Path) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The index, the image config and the layer digests of an archive of one image."""
    with tarfile.open(archive_path) as archive:
        index = json.load(_member(archive, "index.json"))
        manifest = json.load(_blob(archive, index["manifests"][0]["digest"]))
        config = json.load(_blob(archive, manifest["config"]["digest"]))
    return index, config, [layer["digest"] for layer in manifest["layers"]]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def unpack(archive_path: Path, root: Path) -> None:
    """The image's root filesystem under `root`: each layer over the last, whiteouts applied."""
    _index, _config, layers = read(archive_path)
    # A fresh temporary directory is 0700: no user but root could enter the image.
    root.chmod(0o755)
    with tarfile.open(archive_path) as archive:
        for digest in layers:
            with tarfile.open(fileobj=_blob(archive, digest), mode="r|*") as layer:
                for member in layer:
                    path = root / member.name
                    if path.name == ".wh..wh..opq":
                        for entry in path.parent.iterdir():
                            _remove(entry)
                    elif path.name.startswith(".wh."):
                        _remove(path.with_name(path.name.removeprefix(".wh.")))
                    else:
                        if not (member.isdir() and path.is_dir()):
                            _remove(path)
                        # Our own image, with its setuid bits and absolute symlinks.
                        layer.extract(member, root, filter="fully_trusted")
