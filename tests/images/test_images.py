"""The images the node imports, built for real (buildah, debootstrap, gcc), checked in the OCI
archives themselves: their names, their configs, and their programs run in their unpacked
root filesystems, read-only, as the image's user.

Cases:
- the operator image runs as 65532:65532, `agentjobs` its entrypoint, `run` its command,
  /tmp its working directory; `agentjobs --help` and the harvester's git work there with a
  read-only root filesystem and only /tmp writable;
- the example agent image runs agent.sh (executable) as 65532:65532 in /workspace;
- busybox runs sh as root, with its applets linked;
- pause exits 0 on SIGTERM and on SIGINT, as 65535:65535;
- each archive lists its image under the catalog's full names, the ones pods use;
- a second build finds every archive cached and builds none.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devcluster.images import build, catalog
from devcluster.images.recipes import Recipe
from tests.images import oci

pytestmark = pytest.mark.slow

ENTER = Path(__file__).resolve().parent / "enter.py"


@pytest.fixture(scope="session")
def archives(tmp_path_factory: pytest.TempPathFactory) -> dict[Recipe, Path]:
    log_path = tmp_path_factory.mktemp("images") / "build.log"
    with log_path.open("w") as log:
        try:
            return build.build(catalog.NODE_IMAGES, log)
        except subprocess.CalledProcessError:
            log.flush()
            pytest.fail(f"build failed: {log_path.read_text()[-4000:]}")


@pytest.fixture(scope="session")
def roots(
    archives: dict[Recipe, Path], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Recipe], Path]:
    """An image's root filesystem, unpacked the first time a test asks for it."""
    unpacked: dict[Recipe, Path] = {}

    def root(recipe: Recipe) -> Path:
        if recipe not in unpacked:
            unpacked[recipe] = tmp_path_factory.mktemp(recipe.slug)
            oci.unpack(archives[recipe], unpacked[recipe])
        return unpacked[recipe]

    return root


def config(archive: Path) -> dict[str, Any]:
    image_config: dict[str, Any] = oci.read(archive)[1]["config"]
    return image_config


def enter(
    root: Path, image: dict[str, Any], argv: list[str], user: str | None = None
) -> subprocess.Popen[str]:
    """Start argv in the unpacked image as its runtime would: its user, environment and
    working directory, the root filesystem read-only."""
    environment = dict(entry.split("=", 1) for entry in image.get("Env", []))
    return subprocess.Popen(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            sys.executable,
            str(ENTER),
            str(root),
            user or image["User"],
            image.get("WorkingDir") or "/",
            *argv,
        ],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run(root: Path, image: dict[str, Any], argv: list[str], user: str | None = None) -> str:
    process = enter(root, image, argv, user)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    return output


def test_the_operator_image_runs_agentjobs_as_its_user_read_only(
    archives: dict[Recipe, Path], roots: Callable[[Recipe], Path]
) -> None:
    image = config(archives[catalog.OPERATOR])
    assert image["User"] == "65532:65532"
    assert image["Entrypoint"] == ["agentjobs"]
    assert image["Cmd"] == ["run"]
    assert image["WorkingDir"] == "/tmp"
    root = roots(catalog.OPERATOR)
    assert "usage: agentjobs" in run(root, image, [*image["Entrypoint"], "--help"])
    assert "harvest" in run(root, image, ["agentjobs", "harvest", "--help"])
    output = run(
        root,
        image,
        ["sh", "-c", "id -u; git --version; touch /tmp/written; touch /etc/x || echo refused"],
    )
    assert output.splitlines()[0] == "65532"
    assert "git version" in output
    assert "Read-only file system" in output and output.endswith("refused\n")


def test_the_example_agent_runs_its_script_as_65532_in_the_workspace(
    archives: dict[Recipe, Path], roots: Callable[[Recipe], Path]
) -> None:
    image = config(archives[catalog.EXAMPLE_AGENT])
    assert image["User"] == "65532:65532"
    assert image["Entrypoint"] == ["/usr/local/bin/agent.sh"]
    assert image["WorkingDir"] == "/workspace"
    root = roots(catalog.EXAMPLE_AGENT)
    for script in ("agent.sh", "grade.sh"):
        assert (root / "usr/local/bin" / script).stat().st_mode & 0o777 == 0o755


def test_busybox_runs_a_shell_as_root(
    archives: dict[Recipe, Path], roots: Callable[[Recipe], Path]
) -> None:
    image = config(archives[catalog.BUSYBOX])
    assert image["User"] == "root"
    assert image["Cmd"] == ["sh"]
    root = roots(catalog.BUSYBOX)
    script = "id -u; ls /bin/sh /bin/sleep /usr/bin/wget /bin/cat; echo x > /tmp/a && cat /tmp/a"
    output = run(root, image, [*image["Cmd"], "-c", script], user="0:0")
    assert output.splitlines()[0] == "0"
    assert output.endswith("x\n")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_pause_exits_0_on_a_stop_signal(
    archives: dict[Recipe, Path], roots: Callable[[Recipe], Path], stop: signal.Signals
) -> None:
    image = config(archives[catalog.PAUSE])
    assert image["User"] == "65535:65535"
    assert image["Entrypoint"] == ["/pause"]
    with enter(roots(catalog.PAUSE), image, image["Entrypoint"]) as process:
        try:
            time.sleep(1)
            assert process.poll() is None, process.communicate()
            # unshare execs python, which execs /pause: the pid is pause's.
            process.send_signal(stop)
            assert process.wait(timeout=5) == 0
        finally:
            process.kill()


def test_each_archive_names_its_image_as_pods_do(archives: dict[Recipe, Path]) -> None:
    for recipe, archive in archives.items():
        index = oci.read(archive)[0]
        names = [entry["annotations"]["io.containerd.image.name"] for entry in index["manifests"]]
        assert tuple(names) == recipe.names


def test_a_second_build_is_cached(archives: dict[Recipe, Path], tmp_path: Path) -> None:
    with (tmp_path / "log").open("w") as log:
        again = build.build(catalog.NODE_IMAGES, log)
    assert again == archives
    assert "building" not in (tmp_path / "log").read_text()
