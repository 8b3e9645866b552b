"""The images devcluster builds, in build order (each after the images it is built on)."""

from __future__ import annotations

from devcluster.images.debian import DebianImage
from devcluster.images.recipes import (
    PACKAGE_DIR,
    BusyboxImage,
    DirectoryImage,
    PauseImage,
    Recipe,
)

REPOSITORY = PACKAGE_DIR.parent.parent

# The sandbox image containerd starts first in every pod. A name of ours, not upstream's
# registry.k8s.io/pause: the binary is ours (pause/pause.c), and `localhost/` is where
# buildah and podman keep images that exist only locally, so nothing can ever be pulled in
# its place. The node's containerd config names it as its sandbox_image.
PAUSE_IMAGE = "localhost/agentjobs/pause:1"
# The chart's default image (charts/agentjobs: image.repository, and appVersion as the tag).
OPERATOR_IMAGE = "ghcr.io/agentjobs/agentjobs:0.1.0"
EXAMPLE_AGENT_IMAGE = "ghcr.io/agentjobs/example-agent:0.1.0"
# The tests' own images, non-root as the operator's default pod security wants them; tagged,
# since an untagged (`latest`) image is pulled again at every start, and there is no registry.
BUSYBOX_NONROOT_IMAGE = "localhost/agentjobs/busybox:nonroot"
BUSYBOX_UID_12345_IMAGE = "localhost/agentjobs/busybox:uid-12345"
PYTHON_GIT_IMAGE = "localhost/agentjobs/python-git:nonroot"

PAUSE = PauseImage("pause", (PAUSE_IMAGE,), PACKAGE_DIR / "pause" / "Dockerfile")
BUSYBOX = BusyboxImage(
    "busybox",
    ("docker.io/library/busybox:latest", "docker.io/library/busybox:1.36"),
    PACKAGE_DIR / "busybox" / "Dockerfile",
)
DEBIAN = DebianImage(
    "debian",
    ("docker.io/library/debian:bookworm-slim",),
    PACKAGE_DIR / "debian" / "Dockerfile",
    suite="bookworm",
)
PYTHON = DirectoryImage(
    "python",
    (
        "docker.io/library/python:3.11.11-slim-bookworm",
        # The same image under the shorter tags a test's pod may name.
        "docker.io/library/python:3.11-slim",
        "docker.io/library/python:3.11",
    ),
    PACKAGE_DIR / "python" / "Dockerfile",
    PACKAGE_DIR / "python",
)
OPERATOR = DirectoryImage(
    "agentjobs", (OPERATOR_IMAGE,), REPOSITORY / "Dockerfile", REPOSITORY, host_ca=True
)
EXAMPLE_AGENT = DirectoryImage(
    "example-agent",
    (EXAMPLE_AGENT_IMAGE,),
    REPOSITORY / "manifests" / "examples" / "agent" / "Dockerfile",
    REPOSITORY / "manifests" / "examples" / "agent",
)

BUSYBOX_NONROOT = DirectoryImage(
    "busybox-nonroot",
    (BUSYBOX_NONROOT_IMAGE,),
    PACKAGE_DIR / "busybox-nonroot" / "Dockerfile",
    PACKAGE_DIR / "busybox-nonroot",
)
BUSYBOX_UID_12345 = DirectoryImage(
    "busybox-uid-12345",
    (BUSYBOX_UID_12345_IMAGE,),
    PACKAGE_DIR / "busybox-uid-12345" / "Dockerfile",
    PACKAGE_DIR / "busybox-uid-12345",
)
PYTHON_GIT = DirectoryImage(
    "python-git",
    (PYTHON_GIT_IMAGE,),
    PACKAGE_DIR / "python-git" / "Dockerfile",
    PACKAGE_DIR / "python-git",
)

RECIPES: tuple[Recipe, ...] = (
    PAUSE,
    BUSYBOX,
    DEBIAN,
    PYTHON,
    OPERATOR,
    EXAMPLE_AGENT,
    BUSYBOX_NONROOT,
    BUSYBOX_UID_12345,
    PYTHON_GIT,
)
# What the node imports into its containerd: every image but the Debian base, which only
# the other images are built on.
NODE_IMAGES: tuple[Recipe, ...] = tuple(recipe for recipe in RECIPES if recipe is not DEBIAN)
