"""Container launcher: run by the node as `python -I -S launch.py SPEC STATUS_FD`.

It joins the container's memory cgroup, takes the pod's hostname in a UTS
namespace, enters a private mount namespace, makes the host paths a non-root
container needs searchable, bind-mounts the pod's volumes, switches user and
execs the container command.
On any failure before exec it writes the reason to STATUS_FD and exits 128, so
the node can report StartError; a successful exec closes STATUS_FD silently.
Standard library only, so it starts fast with `-S`.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
MS_RDONLY = 0x1
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000


def _mount(libc: ctypes.CDLL, source: str | None, target: str, flags: int) -> None:
    encoded_source = source.encode() if source is not None else None
    if libc.mount(encoded_source, target.encode(), None, flags, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source or ''} on {target}: {os.strerror(errno)}")


def _prepare_target(target: str, is_file: bool) -> None:
    if is_file:
        os.makedirs(os.path.dirname(target) or "/", exist_ok=True)
        if not os.path.exists(target):
            with open(target, "a"):
                pass
    else:
        os.makedirs(target, exist_ok=True)


def _unshare(libc: ctypes.CDLL, flags: int, what: str) -> None:
    if libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare {what}: {os.strerror(errno)}")


def _set_hostname(libc: ctypes.CDLL, hostname: str) -> None:
    """The pod's own hostname, in a UTS namespace; best effort (needs root)."""
    try:
        _unshare(libc, CLONE_NEWUTS, "uts namespace")
    except OSError:
        return
    encoded = hostname.encode()
    libc.sethostname(encoded, len(encoded))


def _open_up(libc: ctypes.CDLL, directory: str) -> None:
    """Make `directory` searchable in this mount namespace only, its entries unchanged.

    A tmpfs (mode 755) covers it, and each entry of the original is bound back (symlinks
    copied), so nothing below gains any permission it did not have.
    """
    original = os.open(directory, os.O_PATH | os.O_DIRECTORY)
    entries = os.listdir(f"/proc/self/fd/{original}")
    if libc.mount(b"tmpfs", directory.encode(), b"tmpfs", 0, b"mode=755") != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount tmpfs on {directory}: {os.strerror(errno)}")
    for name in entries:
        source, target = f"/proc/self/fd/{original}/{name}", os.path.join(directory, name)
        info = os.lstat(source)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), target)
            continue
        if stat.S_ISDIR(info.st_mode):
            os.mkdir(target)
        elif stat.S_ISREG(info.st_mode):
            with open(target, "w"):
                pass
        else:
            continue
        _mount(libc, source, target, MS_BIND | MS_REC)


def _expose(libc: ctypes.CDLL, paths: list[str]) -> None:
    """Let a non-root container reach host paths it needs (the interpreter behind {bin},
    a script named in its command) below a directory only root may search, such as
    /root: an image's own files would be readable by the image's user."""
    for path in paths:
        parts = os.path.realpath(path).strip("/").split("/")
        for depth in range(1, len(parts) + 1):
            directory = "/" + "/".join(parts[:depth])
            info = os.stat(directory)
            if stat.S_ISDIR(info.st_mode) and not info.st_mode & stat.S_IXOTH:
                _open_up(libc, directory)


def _mount_volumes(libc: ctypes.CDLL, mounts: list[dict[str, object]]) -> None:
    # Parents before children, so a nested mountPath lands inside its parent volume.
    for mount in sorted(mounts, key=lambda m: str(m["target"]).count("/")):
        source, target = str(mount["source"]), str(mount["target"])
        _prepare_target(target, bool(mount.get("file")))
        _mount(libc, source, target, MS_BIND | MS_REC)
        if mount.get("readOnly"):
            _mount(libc, None, target, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC)


def _exec_error(program: str, error: OSError) -> str:
    if isinstance(error, FileNotFoundError) and "/" not in program:
        reason = "executable file not found in $PATH"
    elif isinstance(error, FileNotFoundError):
        reason = f"stat {program}: no such file or directory"
    else:
        reason = (error.strerror or str(error)).lower()
    return f'failed to start container process: exec: "{program}": {reason}'


def _exec(argv: list[str], env: dict[str, str]) -> None:
    """execvpe, searching the container's PATH; no imports (we may be setuid already)."""
    program = argv[0]
    if "/" in program:
        os.execve(program, argv, env)
    denied: OSError | None = None
    for directory in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
        try:
            os.execve(os.path.join(directory or ".", program), argv, env)
        except PermissionError as error:
            denied = error
        except (FileNotFoundError, NotADirectoryError):
            continue
    raise denied or FileNotFoundError(2, "not found", program)


def main() -> None:
    with open(sys.argv[1]) as spec_file:
        spec = json.load(spec_file)
    status_fd = int(sys.argv[2])
    os.set_inheritable(status_fd, False)
    argv: list[str] = spec["argv"]
    try:
        if spec.get("cgroupProcs"):
            with open(spec["cgroupProcs"], "w") as procs:
                procs.write(str(os.getpid()))
        libc = ctypes.CDLL(None, use_errno=True)
        if spec.get("hostname"):
            _set_hostname(libc, spec["hostname"])
        if spec.get("mounts") or spec.get("exposed"):
            _unshare(libc, CLONE_NEWNS, "mount namespace")
            _mount(libc, None, "/", MS_REC | MS_PRIVATE)
            _expose(libc, spec.get("exposed") or [])
            _mount_volumes(libc, spec.get("mounts") or [])
        os.makedirs(spec["workingDir"], exist_ok=True)
        os.chdir(spec["workingDir"])
        if spec.get("gid") is not None:
            os.setgroups([int(g) for g in spec.get("groups") or []])
            os.setgid(int(spec["gid"]))
        if spec.get("uid") is not None:
            os.setuid(int(spec["uid"]))
        if not argv:
            raise OSError(0, "no command specified")
    except OSError as error:
        os.write(status_fd, f"failed to create container: {error.strerror or error}".encode())
        os._exit(128)
    try:
        _exec(argv, spec["env"])
    except OSError as error:
        os.write(status_fd, _exec_error(argv[0], error).encode())
        os._exit(128)


if __name__ == "__main__":
    main()
