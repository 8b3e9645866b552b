"""The Debian base image, made by `debootstrap --variant=minbase` from the host's Debian
mirror: it stands in for Docker Hub's debian:bookworm-slim, since no registry is reachable."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from devcluster.images.context import ContextFile

# The host's apt sources (deb822): debootstrap fetches from their mirror, and the image gets
# them as its own, so a Dockerfile's `apt-get install` reaches the same mirror.
HOST_SOURCES = Path("/etc/apt/sources.list.d/debian.sources")

# As in Docker's Debian images, apt keeps no package cache: a layer that installs packages
# holds what they install, not the .debs and the package lists' caches besides.
APT_CONF = """\
APT::Keep-Downloaded-Packages "false";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
"""

# Slim, as Docker's Debian images are: no documentation (but each package's copyright),
# manual pages or translations, neither in the root debootstrap makes nor in what a
# Dockerfile installs later (dpkg leaves them out). In the operator's image they were 70 MB.
SLIM_DIRECTORIES = ("usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale")
DPKG_CONF = "".join(f"path-exclude /{directory}/*\n" for directory in SLIM_DIRECTORIES) + (
    "path-include /usr/share/doc/*/copyright\n"
)

# What the host copies into a new root and a container gets from its runtime instead.
_HOST_FILES = ("etc/resolv.conf", "etc/hostname", "etc/apt/sources.list")


def mirror(sources: str, suite: str) -> str:
    """The first URI of the deb822 stanza of `sources` that lists `suite`."""
    for stanza in sources.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            name, colon, value = line.partition(":")
            if colon and not line.startswith(("#", " ")):
                fields[name.strip()] = value.strip()
        if suite in fields.get("Suites", "").split() and "deb" in fields.get("Types", "").split():
            return fields["URIs"].split()[0]
    raise ValueError(f"no Debian mirror for {suite} in {HOST_SOURCES}")


@dataclass(frozen=True)
class DebianImage:
    slug: str
    names: tuple[str, ...]
    dockerfile: Path
    suite: str
    host_ca: bool = False

    def sources(self) -> tuple[list[ContextFile], list[tuple[str, str]]]:
        sources = HOST_SOURCES.read_bytes()
        debootstrap = subprocess.run(
            ["dpkg-query", "--show", "--showformat=${Version}", "debootstrap"],
            check=True,
            capture_output=True,
            text=True,
        )
        files = [ContextFile("debian.sources", 0o644, hashlib.sha256(sources).hexdigest())]
        # This module is how the root is made: a change to it makes a new image.
        recipe = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
        return files, [
            ("suite", self.suite),
            ("debootstrap", debootstrap.stdout),
            ("recipe", recipe),
        ]

    def context(self, work: Path, log: TextIO) -> Path:
        root = work / "rootfs"
        # A mount namespace of its own: debootstrap mounts /proc and /sys inside the new root.
        subprocess.run(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "debootstrap",
                "--variant=minbase",
                self.suite,
                str(root),
                mirror(HOST_SOURCES.read_text(), self.suite),
            ],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for name in _HOST_FILES:
            (root / name).unlink(missing_ok=True)
        shutil.copy(HOST_SOURCES, root / "etc/apt/sources.list.d/debian.sources")
        (root / "etc/apt/apt.conf.d/slim").write_text(APT_CONF)
        (root / "etc/dpkg/dpkg.cfg.d/slim").write_text(DPKG_CONF)
        for directory in SLIM_DIRECTORIES:
            for entry in (root / directory).rglob("*"):
                copyright = directory == "usr/share/doc" and entry.name == "copyright"
                if not copyright and (entry.is_symlink() or not entry.is_dir()):
                    entry.unlink()
        # The runtime mounts /dev.
        shutil.rmtree(root / "dev")
        (root / "dev").mkdir()
        # apt's lists and caches are as large as the packages; logs tell of the bootstrap.
        for directory in ("var/lib/apt/lists", "var/cache/apt", "var/log"):
            for entry in (root / directory).rglob("*"):
                if entry.is_file() or entry.is_symlink():
                    entry.unlink()
        subprocess.run(
            ["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", "rootfs.tar", "."],
            cwd=work,
            check=True,
        )
        shutil.rmtree(root)
        return work
