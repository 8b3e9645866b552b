"""The images the tests' phases run, built by devcluster.images and imported into the node.

Each is non-root, as the operator's default pod security wants, and tagged: an untagged
(`latest`) image is pulled again at every start, and there is no registry to pull from.
"""

from __future__ import annotations

from devcluster.images.catalog import (
    BUSYBOX_NONROOT_IMAGE,
    BUSYBOX_UID_12345_IMAGE,
    EXAMPLE_AGENT_IMAGE,
    PYTHON_GIT_IMAGE,
)

# sh and busybox's applets, as 65532.
BUSYBOX = BUSYBOX_NONROOT_IMAGE
# busybox as 12345, a user with no /etc/passwd entry and no home.
UID_12345 = BUSYBOX_UID_12345_IMAGE
# python3 and git, as 65532.
PYTHON_GIT = PYTHON_GIT_IMAGE
# The example agent (manifests/examples/agent), as its Dockerfile's USER.
AGENT_IMAGE = EXAMPLE_AGENT_IMAGE
AGENT_UID = 65532
