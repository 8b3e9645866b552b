"""List a phase's output directory for the artifact rule, without following a link (R28)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentjobs.models.output import EntryKind, OutputEntry


class NotADirectory(ValueError):
    """The output directory is missing, a symlink, or not a directory."""


def list_output(root: Path) -> list[OutputEntry]:
    """Every entry under ``root``, recursively, as seen without following symlinks.

    A subdirectory that cannot be opened is listed as a ``special`` entry
    rather than failing the whole listing.
    """
    try:
        mode = os.lstat(root).st_mode
    except FileNotFoundError as error:
        raise NotADirectory(f"{root}: no such directory") from error
    if not stat.S_ISDIR(mode):
        raise NotADirectory(f"{root}: not a directory (symlinks are not followed)")
    entries: list[OutputEntry] = []
    pending = [("", root)]
    while pending:
        prefix, directory = pending.pop()
        try:
            children = list(os.scandir(directory))
        except OSError:
            entries.append(OutputEntry(path=prefix.rstrip("/") or ".", kind=EntryKind.SPECIAL))
            continue
        for child in children:
            path = prefix + child.name
            if child.is_symlink():
                entries.append(OutputEntry(path=path, kind=EntryKind.SYMLINK))
            elif child.is_dir(follow_symlinks=False):
                pending.append((path + "/", Path(child.path)))
            elif child.is_file(follow_symlinks=False):
                info = child.stat(follow_symlinks=False)
                entries.append(
                    OutputEntry(
                        path=path,
                        kind=EntryKind.FILE,
                        size=info.st_size,
                        modified_ns=info.st_mtime_ns,
                    )
                )
            else:
                entries.append(OutputEntry(path=path, kind=EntryKind.SPECIAL))
    return sorted(entries, key=lambda entry: entry.path)
