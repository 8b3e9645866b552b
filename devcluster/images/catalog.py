"""The images devcluster builds, in build order (each after the images it is built on)."""

from __future__ import annotations

from devcluster.images.recipes import PACKAGE_DIR, BusyboxImage, PauseImage, Recipe

# The sandbox image containerd starts first in every pod. A name of ours, not upstream's
# registry.k8s.io/pause: the binary is ours (pause/pause.c), and `localhost/` is where
# buildah and podman keep images that exist only locally, so nothing can ever be pulled in
# its place. The node's containerd config names it as its sandbox_image.
PAUSE_IMAGE = "localhost/agentjobs/pause:1"

PAUSE = PauseImage("pause", (PAUSE_IMAGE,), PACKAGE_DIR / "pause" / "Dockerfile")
BUSYBOX = BusyboxImage(
    "busybox",
    ("docker.io/library/busybox:latest", "docker.io/library/busybox:1.36"),
    PACKAGE_DIR / "busybox" / "Dockerfile",
)

RECIPES: tuple[Recipe, ...] = (PAUSE, BUSYBOX)
# What the node imports into its containerd: what pods run, and the sandbox.
NODE_IMAGES: tuple[Recipe, ...] = (PAUSE, BUSYBOX)
