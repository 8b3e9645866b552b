"""Run a command in an unpacked image as a runtime would, with a read-only root filesystem:
`unshare --mount --propagation private python enter.py ROOT USER WORKDIR ARGV...`, the
image's environment as this process's. /dev holds only null; /tmp is a tmpfs (an emptyDir)."""

from __future__ import annotations

import os
import subprocess
import sys


def main() -> None:
    root, user, workdir, *argv = sys.argv[1:]
    mounts = [
        ["--bind", root, root],
        ["-t", "tmpfs", "tmpfs", f"{root}/dev"],
        ["-t", "tmpfs", "tmpfs", f"{root}/tmp"],
    ]
    for directory in ("dev", "tmp"):
        # A runtime makes the mount points an image lacks (pause has neither).
        os.makedirs(f"{root}/{directory}", exist_ok=True)
    for mount in mounts:
        subprocess.run(["/bin/mount", *mount], check=True)
    open(f"{root}/dev/null", "w").close()
    subprocess.run(["/bin/mount", "--bind", "/dev/null", f"{root}/dev/null"], check=True)
    subprocess.run(["/bin/mount", "-o", "remount,bind,ro", root], check=True)
    uid, _, gid = user.partition(":")
    os.chroot(root)
    os.chdir(workdir)
    os.setgroups([])
    os.setgid(int(gid or uid))
    os.setuid(int(uid))
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
