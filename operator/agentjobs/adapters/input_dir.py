"""Where the fetcher writes the previous phase's artifacts, never outside ``artifacts/input/``.

Paths were checked (``contract/artifacts/handoff.py``); this module makes sure the
filesystem cannot redirect them either: each directory on the way is created
and opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a
symlink already in ``input/`` (a restarted pod keeps its workspace) is
refused instead of followed, and a file is written through that descriptor
(``/proc/self/fd/<n>/<name>``) and renamed into place, which replaces a
symlink of that name rather than writing where it points.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Sequence
from pathlib import Path

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
DIRECTORY_MODE = 0o775  # group-writable, like input/ itself: the agent may be another uid


class UnsafeDestination(ValueError):
    """A directory on the way to an input is a symlink or not a directory."""


def open_parent(root: int, parts: Sequence[str], *, shown: str) -> int:
    """A new descriptor of ``root/parts...``, each part created if missing, none followed.

    ``shown`` names the artifact in the error.
    """
    directory = os.dup(root)
    for part in parts:
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, DIRECTORY_MODE, dir_fd=directory)
        try:
            child = os.open(part, _DIRECTORY_FLAGS, dir_fd=directory)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafeDestination(
                    f"refused {shown!r}: {part!r} on its way in artifacts/input is a symlink "
                    "or a file, not a directory"
                ) from None
            raise
        finally:
            os.close(directory)
        directory = child
    return directory


def clear_partial(parent: int, name: str) -> None:
    """Remove a leftover ``<name>.partial`` (a file or symlink) before writing it afresh."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(f"{name}.partial", dir_fd=parent)


def through(parent: int, name: str) -> Path:
    """The path of ``name`` in the directory open as ``parent``, that no rename moves."""
    return Path(f"/proc/self/fd/{parent}") / name
