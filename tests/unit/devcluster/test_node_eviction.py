"""The process node's emptyDir sizeLimit eviction, as the kubelet's eviction manager does it.

Cases: only emptyDirs with a positive sizeLimit are limited; usage counts allocated blocks (a
sparse file counts what it allocated, not its length); a volume over its limit gets the
kubelet's message, one at or under it none; a pod whose volumes are not set up yet is skipped;
fsGroup makes an emptyDir's files group read-write and its directories setgid group rwx.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from devcluster.node import eviction
from devcluster.node.volumes import apply_fs_group


def pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": "p"}, "spec": {"volumes": list(volumes)}}


class Worker:
    def __init__(self, manifest: dict[str, Any], paths: dict[str, Path] | None) -> None:
        self.pod = manifest
        self.volume_paths = paths

    def evict(self, message: str, grace_seconds: float) -> bool:
        return True


def test_only_empty_dirs_with_a_positive_size_limit_are_limited() -> None:
    limits = eviction.size_limits(
        pod(
            {"name": "a", "emptyDir": {"sizeLimit": "1Mi"}},
            {"name": "b", "emptyDir": {}},
            {"name": "c", "emptyDir": {"sizeLimit": "0"}},
            {"name": "d", "configMap": {"name": "x"}},
        )
    )
    assert limits == {"a": ("1Mi", 2**20)}


def test_usage_counts_allocated_blocks_so_a_sparse_file_counts_little(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data").write_bytes(os.urandom(256 * 1024))
    with (tmp_path / "sparse").open("wb") as sparse:
        sparse.truncate(1 << 30)
    used = eviction.disk_usage(tmp_path)
    assert 256 * 1024 <= used < 1 << 20


def test_a_volume_over_its_limit_gets_the_kubelets_message(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(os.urandom(2 * 2**20))
    manifest = pod({"name": "workspace", "emptyDir": {"sizeLimit": "1Mi"}})
    message = eviction.over_limit(manifest, {"workspace": tmp_path})
    assert message == 'Usage of EmptyDir volume "workspace" exceeds the limit "1Mi". '
    roomy = pod({"name": "workspace", "emptyDir": {"sizeLimit": "10Mi"}})
    assert eviction.over_limit(roomy, {"workspace": tmp_path}) is None


def test_pods_without_volumes_yet_are_skipped_and_the_rest_measured(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(os.urandom(2 * 2**20))
    manifest = pod({"name": "w", "emptyDir": {"sizeLimit": "1M"}})
    pending, running = Worker(manifest, None), Worker(manifest, {"w": tmp_path})
    found = eviction.measure([pending, running])
    assert [(worker is running, message.split('"')[1]) for worker, message in found] == [
        (True, "w")
    ]


def test_fs_group_makes_an_empty_dir_group_writable_and_setgid(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir(mode=0o755)
    (tmp_path / "d" / "f").write_text("x")
    (tmp_path / "d" / "f").chmod(0o600)
    apply_fs_group(tmp_path, os.getgid(), writable=True)
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o2775
    assert stat.S_IMODE((tmp_path / "d" / "f").stat().st_mode) == 0o660
