"""A downloaded object reaches its file only whole and with the recorded SHA-256."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters.checked_file import write_checked

DATA = [b"first ", b"second"]
SHA256 = hashlib.sha256(b"".join(DATA)).hexdigest()


def test_matching_bytes_are_moved_into_place(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    write_checked(DATA, target, sha256=SHA256, url="s3://b/a.txt")
    assert target.read_bytes() == b"first second"
    assert list(tmp_path.iterdir()) == [target]


def test_other_bytes_leave_nothing(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    with pytest.raises(ValueError, match="does not match its recorded SHA-256"):
        write_checked([b"tampered"], target, sha256=SHA256, url="s3://b/a.txt")
    assert list(tmp_path.iterdir()) == []


def test_a_stream_that_breaks_leaves_nothing(tmp_path: Path) -> None:
    def broken() -> Iterator[bytes]:
        yield b"first "
        raise ConnectionError("reset")

    with pytest.raises(ConnectionError):
        write_checked(broken(), tmp_path / "a.txt", sha256=SHA256, url="s3://b/a.txt")
    assert list(tmp_path.iterdir()) == []
