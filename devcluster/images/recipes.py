"""How each kind of image gets its build context, and what its cache key is made of.

A recipe says cheaply what its build depends on (`sources`), so that a cached archive is
found without compiling, copying or bootstrapping anything; `context` then makes the build
context only when the archive has to be built."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TextIO

from devcluster.images.context import ContextFile, read_context

PACKAGE_DIR = Path(__file__).resolve().parent

# Mounted read-only over the image's own bundle for the RUN steps of a build that downloads
# over TLS (pip from PyPI): they trust what the host trusts, which on a machine behind a
# TLS-inspecting proxy includes the proxy's CA. The image keeps Debian's bundle.
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")

Inputs = list[tuple[str, str]]


class Recipe(Protocol):
    # Archive file names start with it.
    @property
    def slug(self) -> str: ...

    # Full references, the first the one the image is built under.
    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def dockerfile(self) -> Path: ...

    # Whether RUN steps see the host's CA bundle (see HOST_CA).
    @property
    def host_ca(self) -> bool: ...

    def sources(self) -> tuple[list[ContextFile], Inputs]:
        """The context files and other inputs the image is made from, for its cache key."""
        ...

    def context(self, work: Path, log: TextIO) -> Path:
        """A build context, made under `work` if it has to be."""
        ...


@dataclass(frozen=True)
class DirectoryImage:
    """An image built from a Dockerfile with a directory of ours as its context."""

    slug: str
    names: tuple[str, ...]
    dockerfile: Path
    directory: Path
    host_ca: bool = False

    def sources(self) -> tuple[list[ContextFile], Inputs]:
        return read_context(self.directory), []

    def context(self, work: Path, log: TextIO) -> Path:
        return self.directory


def _file(path: Path, name: str, mode: int) -> ContextFile:
    return ContextFile(name, mode, hashlib.sha256(path.read_bytes()).hexdigest())


PAUSE_SOURCE = PACKAGE_DIR / "pause" / "pause.c"
PAUSE_FLAGS = ("-static", "-Os", "-s", "-Wall", "-Wextra", "-Werror")


@dataclass(frozen=True)
class PauseImage:
    """The sandbox image: pause.c compiled static with gcc, alone in a layer."""

    slug: str
    names: tuple[str, ...]
    dockerfile: Path
    host_ca: bool = False

    def sources(self) -> tuple[list[ContextFile], Inputs]:
        gcc = subprocess.run(["gcc", "--version"], check=True, capture_output=True, text=True)
        return [_file(PAUSE_SOURCE, "pause.c", 0o644)], [
            ("gcc", gcc.stdout.splitlines()[0]),
            ("flags", " ".join(PAUSE_FLAGS)),
        ]

    def context(self, work: Path, log: TextIO) -> Path:
        subprocess.run(
            ["gcc", *PAUSE_FLAGS, "-o", str(work / "pause"), str(PAUSE_SOURCE)],
            check=True,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        return work


BUSYBOX = Path("/bin/busybox")


@dataclass(frozen=True)
class BusyboxImage:
    """busybox from Debian's busybox-static (its one static binary), with its applet links."""

    slug: str
    names: tuple[str, ...]
    dockerfile: Path
    host_ca: bool = False

    def sources(self) -> tuple[list[ContextFile], Inputs]:
        return [_file(BUSYBOX, "busybox", 0o755)], []

    def context(self, work: Path, log: TextIO) -> Path:
        # Debian's `busybox` package installs a dynamic binary at the same path.
        owner = subprocess.run(["dpkg-query", "--search", str(BUSYBOX)], capture_output=True)
        if not owner.stdout.startswith(b"busybox-static:"):
            raise RuntimeError(f"{BUSYBOX} is not busybox-static's: apt-get install busybox-static")
        shutil.copy(BUSYBOX, work / "busybox")
        return work
