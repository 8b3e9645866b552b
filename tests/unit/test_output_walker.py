"""The output walker and file opener on real hostile trees (R28, issue 15).

Cases: a FIFO, a socket and a device are listed with their kind and never
opened, even when swapped in after the listing; a non-UTF-8 name is listed
escaped and never descended into; a directory swapped for a symlink to
/proc/self after the listing is never followed, by the walk or the opener;
a symlink anywhere in the root's own path is refused; a file or directory
that only another user may read is recorded unreadable (as an unprivileged
user in a forked child, since the tests run as root); paths past the length
or depth bound and trees past the entry bound are recorded, not walked;
the reader never hands on more bytes than fstat said and flags a file that
shrank.
"""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjobs.adapters import output_dir
from agentjobs.models.output import EntryKind
from tests.unit import other_user


@pytest.fixture
def root(tmp_path: Path) -> Iterator[int]:
    descriptor = output_dir.open_root(tmp_path)
    yield descriptor
    os.close(descriptor)


def problems(tmp_path: Path) -> dict[str, tuple[EntryKind, str | None]]:
    return {e.path: (e.kind, e.problem) for e in output_dir.list_output(tmp_path)}


def test_a_socket_is_listed_as_special_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative bind: tmp_path may pass the 108-byte limit
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        assert problems(tmp_path) == {"sock": (EntryKind.SPECIAL, "a socket; not read")}


def test_a_device_node_is_listed_as_special_and_never_opened(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod is not allowed here")
    assert problems(tmp_path) == {"null": (EntryKind.SPECIAL, "a character device; not read")}


def test_a_fifo_swapped_in_after_the_listing_is_refused_without_blocking(
    tmp_path: Path, root: int
) -> None:
    (tmp_path / "report.md").write_text("x")
    [entry] = output_dir.list_open(root)
    (tmp_path / "report.md").unlink()
    os.mkfifo(tmp_path / "report.md")
    with (
        pytest.raises(output_dir.FileProblem, match="no longer a regular file"),
        output_dir.open_file(root, entry.path),
    ):
        pass


def test_a_name_that_is_not_utf8_is_listed_escaped_and_not_descended(tmp_path: Path) -> None:
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    os.mkdir(os.fsencode(tmp_path) + b"/dir\xfe")
    (Path(os.fsdecode(os.fsencode(tmp_path) + b"/dir\xfe")) / "inner.txt").write_text("x")
    assert problems(tmp_path) == {
        "bad\\xff.txt": (EntryKind.FILE, "its name is not UTF-8; not read"),
        "dir\\xfe": (EntryKind.DIRECTORY, "its name is not UTF-8; not read"),
    }


def test_r56_a_name_with_terminal_controls_is_listed_escaped_and_not_read(
    tmp_path: Path,
) -> None:
    for name in ("title\x1b]0;owned\x07.txt", "evil\u202etxt.exe", "two\nlines"):
        (tmp_path / name).write_text("x")
    (tmp_path / "dir\x1b[2J").mkdir()
    (tmp_path / "dir\x1b[2J" / "inner.txt").write_text("x")
    (tmp_path / "café 😀.md").write_text("x")
    unsafe = "its name holds control characters; not read"
    assert problems(tmp_path) == {
        "title\\x1b]0;owned\\x07.txt": (EntryKind.FILE, unsafe),
        "evil\\u202etxt.exe": (EntryKind.FILE, unsafe),
        "two\\nlines": (EntryKind.FILE, unsafe),
        "dir\\x1b[2J": (EntryKind.DIRECTORY, unsafe),
        "café 😀.md": (EntryKind.FILE, None),
    }


def test_a_directory_swapped_for_a_symlink_to_proc_self_is_never_opened_through(
    tmp_path: Path, root: int
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "environ").write_text("mine")
    listed = [e.path for e in output_dir.list_open(root)]
    assert listed == ["d/environ"]
    (tmp_path / "d" / "environ").unlink()
    (tmp_path / "d").rmdir()
    (tmp_path / "d").symlink_to("/proc/self", target_is_directory=True)
    with (
        pytest.raises(output_dir.FileProblem, match="changed while it was listed"),
        output_dir.open_file(root, "d/environ"),
    ):
        pass
    assert problems(tmp_path) == {"d": (EntryKind.SYMLINK, "a symlink; not followed")}


def test_a_swap_loop_during_walks_never_reads_outside_the_tree(tmp_path: Path, root: int) -> None:
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            for make in ("dir", "link"):
                target = tmp_path / "d"
                if target.is_symlink():
                    target.unlink()
                elif target.exists():
                    (target / "environ").unlink(missing_ok=True)
                    target.rmdir()
                if make == "dir":
                    target.mkdir()
                    (target / "environ").write_text("mine")
                else:
                    target.symlink_to("/proc/self", target_is_directory=True)
                time.sleep(0.0005)

    swapper = threading.Thread(target=swap)
    swapper.start()
    read: list[bytes] = []
    walks, deadline = 0, time.monotonic() + 20
    try:
        # Walk until the race has let files through (and been refused) many times over.
        while (walks < 300 or len(read) < 20) and time.monotonic() < deadline:
            walks += 1
            for entry in output_dir.list_open(root):
                if entry.problem is None and entry.kind is EntryKind.FILE:
                    try:
                        with output_dir.open_file(root, entry.path) as (descriptor, info):
                            read.append(os.read(descriptor, info.st_size + 1))
                    except output_dir.FileProblem:
                        pass
    finally:
        stop.set()
        swapper.join()
    assert read, "the race never let a regular file through: the test proves nothing"
    # A file opened between its creation and its write is read as it grew: a prefix of it.
    assert all(b"mine".startswith(data) for data in read), set(read)


def test_a_symlink_in_the_roots_own_path_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real" / "output").mkdir(parents=True)
    (tmp_path / "artifacts").symlink_to(tmp_path / "real", target_is_directory=True)
    with pytest.raises(output_dir.NotADirectory, match="symlinks are not followed"):
        output_dir.open_root(tmp_path / "artifacts" / "output")


def test_a_0600_file_of_another_user_is_recorded_unreadable() -> None:
    with other_user.shared_directory() as shared_tree:
        _a_0600_file_of_another_user_is_recorded_unreadable(shared_tree)


def _a_0600_file_of_another_user_is_recorded_unreadable(shared_tree: Path) -> None:
    (shared_tree / "secret.txt").write_text("root only")
    (shared_tree / "secret.txt").chmod(0o600)
    (shared_tree / "open.txt").write_text("anyone")
    (shared_tree / "closed").mkdir(mode=0o700)
    (shared_tree / "closed" / "inside.txt").write_text("x")

    def read_as_nobody() -> object:
        root = output_dir.open_root(shared_tree)
        listed = {e.path: e.problem for e in output_dir.list_open(root)}
        opened = {}
        for path in ("secret.txt", "open.txt"):
            try:
                with output_dir.open_file(root, path):
                    opened[path] = "read"
            except output_dir.FileProblem as error:
                opened[path] = str(error)
        return [listed, opened]

    outcome = other_user.as_nobody(read_as_nobody)
    assert outcome == [
        {
            "closed": "unreadable (permission denied)",
            "open.txt": None,
            "secret.txt": None,
        },
        {"secret.txt": "unreadable (permission denied)", "open.txt": "read"},
    ]


def test_paths_past_the_length_or_depth_bound_are_recorded_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_dir, "MAX_PATH_BYTES", 12)
    monkeypatch.setattr(output_dir, "MAX_DEPTH", 2)
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "f").write_text("x")
    (tmp_path / "a" / "long-name.txt").write_text("x")
    assert problems(tmp_path) == {
        "a/b/c": (EntryKind.DIRECTORY, "deeper than 2 directories; not read"),
        "a/long-name.txt": (EntryKind.FILE, "its path is longer than 12 bytes; not read"),
    }


def test_a_tree_past_the_entry_bound_is_cut_with_one_entry_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_dir, "MAX_ENTRIES", 5)
    for index in range(8):
        (tmp_path / f"f{index}").write_text("x")
    entries = output_dir.list_output(tmp_path)
    assert [e.path for e in entries] == ["f0", "f1", "f2", "f3", "f4", "."]
    assert entries[-1].problem is not None and "more than 5 entries" in entries[-1].problem


def test_a_tree_at_the_entry_bound_is_walked_whole_directories_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_dir, "MAX_ENTRIES", 3)
    for path in ("a/f0", "a/f1", "b/f2"):
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text("x")
    assert [e.problem for e in output_dir.list_output(tmp_path)] == [None, None, None]


def test_directories_past_their_bound_are_recorded_not_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_dir, "MAX_DIRECTORIES", 2)
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_text("x")
    assert problems(tmp_path) == {
        "a/f": (EntryKind.FILE, None),
        "b/f": (EntryKind.FILE, None),
        "c": (EntryKind.DIRECTORY, "past the first 2 directories; not read"),
    }


def test_the_reader_hands_on_no_more_than_fstat_said(tmp_path: Path, root: int) -> None:
    (tmp_path / "grows.txt").write_bytes(b"0123456789")
    with output_dir.open_file(root, "grows.txt") as (descriptor, info):
        reader = output_dir.FileReader(descriptor, 4)
        assert reader.read() == b"0123"
        assert reader.problem is None
    assert info.st_size == 10


def test_a_file_that_shrinks_while_read_is_flagged(tmp_path: Path, root: int) -> None:
    (tmp_path / "shrinks.txt").write_bytes(b"0123456789")
    with output_dir.open_file(root, "shrinks.txt") as (descriptor, info):
        os.truncate(tmp_path / "shrinks.txt", 3)
        reader = output_dir.FileReader(descriptor, info.st_size)
        with pytest.raises(OSError):
            reader.read()
        assert reader.problem == "it shrank while it was read; not stored"
