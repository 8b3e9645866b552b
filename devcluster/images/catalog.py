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
# The agent CLI images (manifests/agents), tagged with the CLI's version, and their base.
AGENT_NODE_IMAGE = "ghcr.io/agentjobs/agent-node:22.23.5"
CLAUDE_CODE_IMAGE = "ghcr.io/agentjobs/claude-code:2.1.328"
CODEX_IMAGE = "ghcr.io/agentjobs/codex:0.169.0"
GEMINI_CLI_IMAGE = "ghcr.io/agentjobs/gemini-cli:0.61.0"
AGENTS_DIR = REPOSITORY / "manifests" / "agents"

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


def _agent(slug: str, name: str, host_ca: bool = True) -> DirectoryImage:
    directory = AGENTS_DIR / slug
    return DirectoryImage(slug, (name,), directory / "Dockerfile", directory, host_ca)


# The base installs ca-certificates, which the host's CA bundle mounted over Debian's would
# stop (its ADDs are fetched by buildah itself); each CLI's npm install fetches over TLS.
AGENT_NODE = _agent("agent-node", AGENT_NODE_IMAGE, host_ca=False)
CLAUDE_CODE = _agent("claude-code", CLAUDE_CODE_IMAGE)
CODEX = _agent("codex", CODEX_IMAGE)
GEMINI_CLI = _agent("gemini-cli", GEMINI_CLI_IMAGE)
# Built and imported only for the tests that run a real agent CLI: together about 1.5 GB,
# which every `up` would otherwise build first.
AGENT_CLI_IMAGES: tuple[Recipe, ...] = (CLAUDE_CODE, CODEX, GEMINI_CLI)

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
    AGENT_NODE,
    *AGENT_CLI_IMAGES,
)
# What the node imports into its containerd at `up`: every image but the bases, which only
# the other images are built on, and the agent CLIs'.
NODE_IMAGES: tuple[Recipe, ...] = tuple(
    recipe for recipe in RECIPES if recipe not in (DEBIAN, AGENT_NODE, *AGENT_CLI_IMAGES)
)
