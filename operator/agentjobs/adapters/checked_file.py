"""Writing a downloaded object to a file only if it hashes to what was recorded."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def write_checked(chunks: Iterable[bytes], destination: Path, *, sha256: str, url: str) -> None:
    """Write ``chunks`` beside ``destination`` and move them there only if they hash to
    ``sha256``; raise ValueError otherwise. Whatever the stream raises is raised as it is,
    with nothing left behind."""
    digest = hashlib.sha256()
    partial = destination.with_name(destination.name + ".partial")
    try:
        with partial.open("wb") as target:
            for chunk in chunks:
                digest.update(chunk)
                target.write(chunk)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise ValueError(
            f"{url} does not match its recorded SHA-256 "
            f"(expected {sha256}, got {digest.hexdigest()})"
        )
    partial.replace(destination)
