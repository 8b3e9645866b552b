"""buildah, with storage of our own: images under ~/.cache/agentjobs/images, nothing read from
or written to /var/lib/containers, and never a pull from a registry (none is reachable; every
base image is one we built and loaded)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

PACKAGE_DIR = Path(__file__).resolve().parent
# Short names in FROM lines mean Docker Hub's, as with Docker.
REGISTRIES_CONF = PACKAGE_DIR / "registries.conf"


class Buildah:
    def __init__(self, home: Path, log: TextIO) -> None:
        self._home = home
        self._log = log
        self._global = [
            "--root",
            str(home / "storage"),
            "--runroot",
            str(home / "run"),
            "--storage-driver",
            "overlay",
            "--registries-conf",
            str(REGISTRIES_CONF),
            # An empty drop-in directory, so the host's short-name aliases play no part.
            "--registries-conf-dir",
            str(home / "registries.conf.d"),
        ]

    def _command(self, *args: str) -> list[str]:
        # A private mount namespace: a build killed half-way leaves no overlay mount behind on
        # the host. In it, /var is an overlay whose writes land under our directory: buildah
        # keeps caches and locks under /var (/var/lib/containers/cache, /var/cache/containers,
        # /var/tmp) whatever its storage flags say.
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'mount -t overlay overlay -o "lowerdir=/var,upperdir=$1,workdir=$2" /var'
            ' && shift 2 && exec "$@"',
            "sh",
            str(self._home / "var" / "upper"),
            str(self._home / "var" / "work"),
            "buildah",
            *self._global,
            *args,
        ]

    def _directories(self) -> None:
        for directory in ("registries.conf.d", "cni", "var/upper", "var/work"):
            (self._home / directory).mkdir(parents=True, exist_ok=True)

    def _run(self, *args: str) -> None:
        self._directories()
        self._log.flush()
        subprocess.run(
            self._command(*args),
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def _output(self, *args: str) -> str:
        self._directories()
        result = subprocess.run(
            self._command(*args), check=True, stdin=subprocess.DEVNULL, capture_output=True
        )
        return result.stdout.decode().strip()

    def build(
        self, dockerfile: Path, context: Path, names: Sequence[str], volumes: Sequence[str]
    ) -> None:
        self._run(
            "bud",
            *(f"--volume={volume}" for volume in volumes),
            "--file",
            str(dockerfile),
            *(f"--tag={name}" for name in names),
            "--pull=never",
            # chroot: RUN steps are chrooted processes of ours, with no runtime, cgroup or
            # network set up on the host for them; they share its network to reach PyPI and
            # the Debian mirror.
            "--isolation",
            "chroot",
            "--network",
            "host",
            # Not /etc/cni/net.d, which buildah creates when it looks for a network config.
            "--cni-config-dir",
            str(self._home / "cni"),
            # Layer times fixed, so an unchanged input makes an unchanged image.
            "--timestamp",
            "0",
            str(context),
        )

    def push_layout(self, image: str, layout: Path) -> None:
        """Write `image` as an OCI layout directory (archive.pack tars it under its names)."""
        self._run("push", "--quiet", image, f"oci:{layout}")

    def prune(self) -> None:
        """Drop the images no name points to any more: earlier builds' and build stages'."""
        self._run("rmi", "--prune")

    def image_id(self, image: str) -> str | None:
        """The ID of the image storage holds under the name `image`, if any."""
        found = self._output("images", "--quiet", "--no-trunc", "--filter", f"reference={image}")
        return found.splitlines()[0].removeprefix("sha256:") if found else None

    def load(self, archive: Path, name: str) -> None:
        """Put an image saved by archive.pack back into storage under `name`."""
        image_id = self._output("pull", "--quiet", f"oci-archive:{archive}:{name}")
        self._run("tag", image_id, name)


def version() -> str:
    """buildah's version: part of every cache key, since a different builder may build the
    same Dockerfile differently."""
    result = subprocess.run(["buildah", "--version"], check=True, capture_output=True, text=True)
    return result.stdout.strip()
