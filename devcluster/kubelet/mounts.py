"""The host's mount table, and the commands that change it (only under the cluster directory)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_ESCAPE = re.compile(r"\\([0-7]{3})")


def run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, capture_output=True)


def mount_points(mountinfo: str) -> list[str]:
    """The mount points of a /proc/<pid>/mountinfo text, unescaped (a space is \\040)."""
    return [
        _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), line.split()[4])
        for line in mountinfo.splitlines()
        if line
    ]


def host_mount_points() -> list[str]:
    with open("/proc/self/mountinfo") as mountinfo:
        return mount_points(mountinfo.read())


def mounted(path: Path) -> bool:
    """Whether `path` is a mount point in our (the host's) mount namespace."""
    return str(path) in host_mount_points()


def under(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def private_directory(directory: Path) -> None:
    """Make `directory` a private mount of itself, if it is not one yet: a mount namespace file
    may not be bound onto a shared mount, which the host's root often is."""
    directory.mkdir(parents=True, exist_ok=True)
    if not mounted(directory):
        run(["mount", "--bind", str(directory), str(directory)])
        run(["mount", "--make-private", str(directory)])
