"""Build the images into OCI archives under ~/.cache/agentjobs/images, each keyed by a hash of
its inputs, and rebuild one only when they change."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from devcluster.images import buildah
from devcluster.images.archive import image_id, pack
from devcluster.images.catalog import NODE_IMAGES, RECIPES
from devcluster.images.context import cache_key
from devcluster.images.names import from_images
from devcluster.images.recipes import HOST_CA, Recipe

IMAGES_DIR = Path.home() / ".cache" / "agentjobs" / "images"
ARCHIVES_DIR = IMAGES_DIR / "archives"
# Hex digits of the cache key in an archive's name.
KEY_LENGTH = 20


@contextlib.contextmanager
def build_lock(log: TextIO) -> Iterator[None]:
    """Held while building: two `devcluster up`s build one after the other, and the second
    finds the first's archives."""
    IMAGES_DIR.mkdir(parents=True, exist_ok=True)
    with (IMAGES_DIR / "lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("images: waiting for another build to finish", file=log, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# Archives kept for each image: several worktrees (or branches) share the cache, each
# building the operator from its own sources, and must not rebuild in turn.
KEPT_ARCHIVES = 4


def _forget(recipe: Recipe) -> None:
    """Delete the archives of `recipe` beyond the KEPT_ARCHIVES used last."""
    pattern = f"{recipe.slug}-{'?' * KEY_LENGTH}.tar"
    archives = sorted(ARCHIVES_DIR.glob(pattern), key=lambda path: path.stat().st_mtime)
    for old in archives[:-KEPT_ARCHIVES]:
        old.unlink()


class Builder:
    """Builds recipes in order, each once, remembering the archive each one ended as."""

    def __init__(self, log: TextIO) -> None:
        self._log = log
        self._buildah = buildah.Buildah(IMAGES_DIR, log)
        self._buildah_version = buildah.version()
        # full reference -> archive holding it
        self._archives: dict[str, Path] = {}

    def key(self, recipe: Recipe) -> str:
        files, inputs = recipe.sources()
        dockerfile = recipe.dockerfile.read_bytes()
        inputs += [
            ("dockerfile", hashlib.sha256(dockerfile).hexdigest()),
            ("buildah", self._buildah_version),
            ("names", " ".join(recipe.names)),
        ]
        inputs += [
            (f"base {base}", image_id(self._archives[base]))
            for base in from_images(dockerfile.decode())
        ]
        return cache_key(files, inputs)

    def build(self, recipe: Recipe) -> Path:
        archive = ARCHIVES_DIR / f"{recipe.slug}-{self.key(recipe)[:KEY_LENGTH]}.tar"
        if archive.exists():
            # Its mtime says when it was last used, for `_forget`.
            os.utime(archive)
        else:
            started = time.monotonic()
            print(f"images: building {recipe.names[0]}", file=self._log, flush=True)
            self._build(recipe, archive)
            elapsed = time.monotonic() - started
            print(f"images: built {archive.name} in {elapsed:.1f} s", file=self._log, flush=True)
            _forget(recipe)
        for name in recipe.names:
            self._archives[name] = archive
        return archive

    def _build(self, recipe: Recipe, archive: Path) -> None:
        for base in from_images(recipe.dockerfile.read_text()):
            # The build must start from the base its key names. Storage may have lost it, or
            # hold another under its name (built from another worktree's recipe).
            if self._buildah.image_id(base) != image_id(self._archives[base]):
                self._buildah.load(self._archives[base], base)
        ARCHIVES_DIR.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=IMAGES_DIR, prefix="work-") as work:
            context = recipe.context(Path(work), self._log)
            volumes = [f"{HOST_CA}:{HOST_CA}:ro"] if recipe.host_ca else []
            self._buildah.build(recipe.dockerfile, context, recipe.names, volumes)
            layout = Path(work, "layout")
            self._buildah.push_layout(recipe.names[0], layout)
            pack(layout, recipe.names, archive)
        self._buildah.prune()


def with_bases(recipes: Sequence[Recipe]) -> list[Recipe]:
    """`recipes` and the recipes of the images they are built on, in build order."""
    providers = {name: recipe for recipe in RECIPES for name in recipe.names}
    needed = set(recipes)
    for recipe in reversed(RECIPES):
        if recipe in needed:
            needed.update(providers[base] for base in from_images(recipe.dockerfile.read_text()))
    return [recipe for recipe in RECIPES if recipe in needed]


def build(recipes: Sequence[Recipe], log: TextIO) -> dict[Recipe, Path]:
    """Build each of `recipes` that is not cached, after what it is built on."""
    with build_lock(log):
        builder = Builder(log)
        archives = {recipe: builder.build(recipe) for recipe in with_bases(recipes)}
    return {recipe: archives[recipe] for recipe in recipes}


def node_images(log: TextIO) -> list[Path]:
    """The archives the node's containerd imports (`ctr -n k8s.io images import`), built
    first if they are missing."""
    return list(build(NODE_IMAGES, log).values())
