"""Running a piece of a test as an unprivileged user: the tests run as root, and root
reads every file, so an unreadable file needs another user to be unreadable to."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

NOBODY = 65534


def as_nobody(work: Callable[[], object]) -> object:
    """``work()`` in a forked child that dropped root, its JSON answer read back."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:
            os.close(reading)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(writing, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        data = answer.read()
    os.waitpid(child, 0)
    return json.loads(data)


@contextmanager
def shared_directory() -> Iterator[Path]:
    """A directory another user can walk into (pytest's own tmp_path is 0700 for root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to hand files to another user")
    with tempfile.TemporaryDirectory() as name:
        tree = Path(name)
        tree.chmod(0o755)
        yield tree
