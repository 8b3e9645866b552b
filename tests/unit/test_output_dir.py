"""Listing an output directory on a real filesystem (R28).

Cases: nested files and sizes; symlinks to files outside, to directories and
in loops are listed, never followed; FIFOs are never opened; junk directories
are listed for the rule to skip; a missing or symlinked root is an error.
The walker against a hostile tree is in test_output_walker.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentjobs.adapters import output_dir
from agentjobs.models.output import EntryKind, OutputEntry


def test_r28_files_are_listed_with_relative_paths_and_sizes(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "deep.txt").write_bytes(b"12345")
    (tmp_path / "empty.md").touch()
    entries = output_dir.list_output(tmp_path)
    assert [(e.path, e.kind, e.size) for e in entries] == [
        ("a/b/deep.txt", EntryKind.FILE, 5),
        ("empty.md", EntryKind.FILE, 0),
    ]
    assert entries[0].modified_ns == (tmp_path / "a" / "b" / "deep.txt").stat().st_mtime_ns


def test_r28_symlinks_are_listed_and_never_followed(tmp_path: Path) -> None:
    (tmp_path / "passwd").symlink_to("/etc/passwd")
    (tmp_path / "etc").symlink_to("/etc", target_is_directory=True)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    entries = output_dir.list_output(tmp_path)
    assert [(e.path, e.kind) for e in entries] == [
        ("etc", EntryKind.SYMLINK),
        ("loop", EntryKind.SYMLINK),
        ("passwd", EntryKind.SYMLINK),
    ]


def test_r28_a_fifo_is_listed_as_special_and_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert output_dir.list_output(tmp_path) == [
        OutputEntry(path="pipe", kind=EntryKind.SPECIAL, problem="a FIFO (named pipe); not read")
    ]


def test_r28_junk_directories_are_listed_for_the_rule_to_skip(tmp_path: Path) -> None:
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.pyc").write_bytes(b"x")
    assert [e.path for e in output_dir.list_output(tmp_path)] == ["__pycache__/m.pyc"]


def test_a_missing_output_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(output_dir.NotADirectory, match="no such directory"):
        output_dir.list_output(tmp_path / "missing")


def test_a_symlinked_output_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    with pytest.raises(output_dir.NotADirectory, match="symlinks are not followed"):
        output_dir.list_output(tmp_path / "link")
