"""The archives import into containerd as the node imports them (`ctr -n k8s.io images
import`), each under the names pods use, unpacked for running: checked against a containerd
of the test's own, its state in a temporary directory and its mounts in a namespace of its own.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from devcluster.images import build, catalog
from devcluster.images.recipes import Recipe

pytestmark = pytest.mark.slow


@pytest.fixture
def containerd(tmp_path: Path) -> Iterator[Path]:
    socket = tmp_path / "containerd.sock"
    config = tmp_path / "config.toml"
    config.write_text(
        f'version = 2\nroot = "{tmp_path}/root"\nstate = "{tmp_path}/state"\n'
        # Images only: no CRI, nothing run.
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
        f'[grpc]\naddress = "{socket}"\n[ttrpc]\naddress = "{socket}.ttrpc"\n'
        f'[plugins."io.containerd.internal.v1.opt"]\npath = "{tmp_path}/opt"\n'
    )
    with (tmp_path / "containerd.log").open("w") as log:
        process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "containerd", "--config", config],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 20
        while not socket.exists():
            assert process.poll() is None, (tmp_path / "containerd.log").read_text()
            assert time.monotonic() < deadline, "containerd did not start"
            time.sleep(0.1)
        yield socket
    finally:
        process.terminate()
        process.wait(10)


def ctr(socket: Path, *args: str) -> str:
    command = ["ctr", "--address", str(socket), "--namespace", "k8s.io", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def test_each_node_image_imports_under_its_names(containerd: Path, tmp_path: Path) -> None:
    with (tmp_path / "build.log").open("w") as log:
        archives: dict[Recipe, Path] = build.build(catalog.NODE_IMAGES, log)
    for archive in set(archives.values()):
        ctr(containerd, "images", "import", str(archive))
    names = set(ctr(containerd, "images", "list", "--quiet").split())
    assert names == {name for recipe in catalog.NODE_IMAGES for name in recipe.names}
    assert catalog.PAUSE_IMAGE in names
    # Unpacked: the snapshots a container of each image would start from exist.
    for name in names:
        assert "complete" in ctr(containerd, "images", "check", f"name=={name}")
