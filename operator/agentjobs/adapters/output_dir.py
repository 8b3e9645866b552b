"""List and open a phase's output directory so that no agent can trick the reader (R28).

The agent owns the directory and may change it while it is read: swap a
listed directory for a symlink to ``/proc/self``, leave a FIFO that would
block ``open()`` for ever, a device, a name that is not UTF-8 or that would move a
terminal's cursor, a file it alone may read. So every path is walked one component at
a time from an open directory descriptor (``O_NOFOLLOW | O_DIRECTORY`` per component, the
portable form of ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``), names
are handled as bytes, a file is opened ``O_NONBLOCK | O_NOFOLLOW`` and kept
only when ``fstat`` on the opened descriptor says it is a regular file. Every
problem with one entry becomes that entry's ``problem``; nothing here raises
for a file tree, except :class:`NotADirectory` for the root itself.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agentjobs.models import output, unsafe_text
from agentjobs.models.output import EntryKind, OutputEntry

_UNSAFE_IN_NAME = re.compile(f"[\t\n{unsafe_text.CONTROLS}{unsafe_text.BIDI}]")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
MAX_PATH_BYTES = output.MAX_PATH_BYTES
MAX_DEPTH = 64
# Entries other than directories examined per walk (ten times the default file cap), and
# directories walked: past them the rest is not read, so that a tree of millions of files
# costs one bounded walk (about 2 KB of memory per entry).
MAX_ENTRIES = 100_000
MAX_DIRECTORIES = 10_000
TRUNCATED_PATH = "."  # no entry has this name: it stands for everything not examined


class NotADirectory(ValueError):
    """The output directory is missing, a symlink, or not a directory."""


class FileProblem(Exception):
    """One file could not be read as a regular file: it is skipped, never retried."""


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def _describe(error: OSError) -> str:
    if error.errno in (errno.EACCES, errno.EPERM):
        return "unreadable (permission denied)"
    return f"unreadable ({os.strerror(error.errno or 0) or error})"


def open_root(root: Path) -> int:
    """An ``O_DIRECTORY`` descriptor of ``root``, no component of it a symlink."""
    if not root.is_absolute():
        root = Path.cwd() / root
    try:
        descriptor = os.open("/", _DIRECTORY_FLAGS)
    except OSError as error:
        raise NotADirectory(f"/: {error.strerror}") from error
    for part in root.parts[1:]:
        try:
            child = os.open(part, _DIRECTORY_FLAGS, dir_fd=descriptor)
        except FileNotFoundError as error:
            raise NotADirectory(f"{root}: no such directory") from error
        except OSError as error:
            raise NotADirectory(
                f"{root}: not a directory (symlinks are not followed): {error.strerror}"
            ) from error
        finally:
            os.close(descriptor)
        descriptor = child
    return descriptor


@dataclass
class _Walk:
    device: int
    entries: list[OutputEntry]
    examined: int = 0
    directories: int = 0
    truncated: bool = False


def _name(raw: bytes) -> tuple[str, str | None]:
    """The name as text, escaped where it cannot be shown as it is, and why it is not read
    (None: it is read). A name with a terminal control (R56) would reach statuses and
    terminals; in a name, tab and line feed count as such too."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace"), "its name is not UTF-8; not read"
    if _UNSAFE_IN_NAME.search(text) is None:
        return text, None
    escaped = _UNSAFE_IN_NAME.sub(lambda m: m.group().encode("unicode_escape").decode(), text)
    return escaped, "its name holds control characters; not read"


def _entry_for(info: os.stat_result, path: str, *, problem: str | None = None) -> OutputEntry:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return OutputEntry(
            path=path, kind=EntryKind.SYMLINK, problem=problem or "a symlink; not followed"
        )
    if stat.S_ISDIR(mode):
        return OutputEntry(path=path, kind=EntryKind.DIRECTORY, problem=problem)
    if stat.S_ISREG(mode):
        return OutputEntry(
            path=path,
            kind=EntryKind.FILE,
            size=info.st_size,
            modified_ns=info.st_mtime_ns,
            problem=problem,
        )
    what = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return OutputEntry(path=path, kind=EntryKind.SPECIAL, problem=problem or f"{what}; not read")


def _open_subdirectory(directory: int, name: bytes, path: str, walk: _Walk) -> int | None:
    """The child directory's descriptor, or None with the reason recorded."""
    try:
        child = os.open(name, _DIRECTORY_FLAGS, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            problem = "changed while it was listed (no longer a directory); not followed"
        else:
            problem = _describe(error)
        walk.entries.append(OutputEntry(path=path, kind=EntryKind.DIRECTORY, problem=problem))
        return None
    if os.fstat(child).st_dev != walk.device:
        os.close(child)
        walk.entries.append(
            OutputEntry(
                path=path, kind=EntryKind.DIRECTORY, problem="on another filesystem; not read"
            )
        )
        return None
    return child


def _names(directory: int) -> list[bytes]:
    # listdir on a descriptor gives str names decoded with surrogateescape; fsencode
    # restores the exact bytes, whatever the locale.
    return sorted(os.fsencode(name) for name in os.listdir(directory))


def _walk(directory: int, prefix: str, depth: int, walk: _Walk) -> None:
    try:
        names = _names(directory)
    except OSError as error:
        walk.entries.append(
            OutputEntry(
                path=prefix.rstrip("/") or ".", kind=EntryKind.DIRECTORY, problem=_describe(error)
            )
        )
        return
    for raw in names:
        if walk.truncated:
            return
        text, refused = _name(raw)
        path = prefix + text
        try:
            info = os.stat(raw, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            continue  # removed since it was listed: it is not there to take
        except OSError as error:
            walk.entries.append(
                OutputEntry(path=path, kind=EntryKind.FILE, problem=_describe(error))
            )
            continue
        if not stat.S_ISDIR(info.st_mode):
            if walk.examined >= MAX_ENTRIES:
                walk.truncated = True
                return
            walk.examined += 1
        if refused is not None:
            walk.entries.append(_entry_for(info, path, problem=refused))
        elif len(path.encode()) > MAX_PATH_BYTES:
            problem = f"its path is longer than {MAX_PATH_BYTES} bytes; not read"
            walk.entries.append(_entry_for(info, path, problem=problem))
        elif not stat.S_ISDIR(info.st_mode):
            walk.entries.append(_entry_for(info, path))
        elif depth >= MAX_DEPTH:
            problem = f"deeper than {MAX_DEPTH} directories; not read"
            walk.entries.append(_entry_for(info, path, problem=problem))
        elif walk.directories >= MAX_DIRECTORIES:
            problem = f"past the first {MAX_DIRECTORIES} directories; not read"
            walk.entries.append(_entry_for(info, path, problem=problem))
        elif (child := _open_subdirectory(directory, raw, path, walk)) is not None:
            walk.directories += 1
            try:
                _walk(child, path + "/", depth + 1, walk)
            finally:
                os.close(child)


def list_open(root: int) -> list[OutputEntry]:
    """Every entry under the open directory ``root``, sorted by path.

    Regular files carry their size; every entry that cannot be an artifact
    for a reason only the filesystem knows carries a ``problem``. Past
    :data:`MAX_ENTRIES` files the walk stops and one entry says so.
    """
    walk = _Walk(device=os.fstat(root).st_dev, entries=[])
    _walk(root, "", 0, walk)
    entries = sorted(walk.entries, key=lambda entry: entry.path)
    if walk.truncated:
        problem = f"the directory holds more than {MAX_ENTRIES} entries; the rest were not read"
        entries.append(OutputEntry(path=TRUNCATED_PATH, kind=EntryKind.DIRECTORY, problem=problem))
    return entries


def list_output(root: Path) -> list[OutputEntry]:
    """Every entry under ``root``, as :func:`list_open` lists it."""
    descriptor = open_root(root)
    try:
        return list_open(descriptor)
    finally:
        os.close(descriptor)


@contextmanager
def open_file(root: int, path: str) -> Iterator[tuple[int, os.stat_result]]:
    """A descriptor of the regular file at ``path`` beneath ``root`` and its ``fstat``.

    Raises :class:`FileProblem` (with the reason to record) when a component
    is a symlink or not a directory, the file is not a regular file once
    opened, or it cannot be read.
    """
    *parents, last = path.split("/")
    opened: list[int] = []
    try:
        directory = root
        for part in parents:
            directory = os.open(part, _DIRECTORY_FLAGS, dir_fd=directory)
            opened.append(directory)
        # Look before opening, so that a device or FIFO is never opened at all; O_NONBLOCK
        # and the fstat below cover one swapped in between.
        if not stat.S_ISREG(os.stat(last, dir_fd=directory, follow_symlinks=False).st_mode):
            raise FileProblem("changed while it was listed (no longer a regular file); not read")
        descriptor = os.open(last, _FILE_FLAGS, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            raise FileProblem("changed while it was listed; not read") from error
        raise FileProblem(_describe(error)) from error
    finally:
        for item in opened:
            os.close(item)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise FileProblem("not a regular file once opened; not read")
        yield descriptor, info
    finally:
        os.close(descriptor)


class FileReader(io.RawIOBase):
    """Exactly ``size`` bytes of an open file, hashed as they are handed on.

    An upload never reads more than ``fstat`` said the file held; a file that
    ends early or fails to read sets ``problem`` (and raises, which ends the
    upload): the caller then skips the file instead of retrying storage.
    """

    def __init__(self, descriptor: int, size: int) -> None:
        super().__init__()
        self._descriptor = descriptor
        self._remaining = size
        self.digest = hashlib.sha256()
        self.problem: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._remaining == 0:
            return 0
        try:
            data = os.read(self._descriptor, min(len(buffer), self._remaining))
        except OSError as error:
            self.problem = _describe(error)
            raise
        if not data:
            self.problem = "it shrank while it was read; not stored"
            raise OSError(errno.EIO, self.problem)
        buffer[: len(data)] = data
        self._remaining -= len(data)
        self.digest.update(data)
        return len(data)
