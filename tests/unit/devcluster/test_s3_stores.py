"""devcluster's S3 stores: MinIO's command line and environment, the choice `up --s3` records,
which store `env` points at, and that a store not chosen is not built."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from devcluster import __main__ as cli
from devcluster import cluster, stores
from devcluster.build import BIN_DIR, MINIO_VERSION, builds_for
from devcluster.components import ALL, MINIO, S3
from devcluster.layout import Layout, s3_credentials


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path / "cluster")


def test_minio_serves_its_data_dir_on_the_host_address_pods_reach(layout: Layout) -> None:
    argv = MINIO.argv(layout)

    assert argv == [
        str(BIN_DIR / f"minio-{MINIO_VERSION}"),
        "server",
        "--address=10.87.0.1:9010",
        "--console-address=127.0.0.1:9011",
        str(layout.root / "minio"),
    ]
    assert (layout.root / "minio").is_dir()
    assert MINIO.ports == (9010, 9011)


def test_minio_takes_the_clusters_root_keys_and_no_console_from_its_environment(
    layout: Layout,
) -> None:
    credentials = s3_credentials(layout)

    assert MINIO.environment(layout) == {
        "MINIO_ROOT_USER": credentials.access_key,
        "MINIO_ROOT_PASSWORD": credentials.secret_key,
        "MINIO_BROWSER": "off",
        "MINIO_UPDATE": "off",
    }
    # MinIO refuses a root password shorter than 8 characters.
    assert len(credentials.secret_key) >= 8
    assert S3.environment(layout) == {}


def test_no_two_components_listen_on_the_same_port() -> None:
    ports = [port for component in ALL for port in component.ports]

    assert len(ports) == len(set(ports))


def test_versitygw_is_chosen_until_up_asks_for_another(layout: Layout) -> None:
    assert stores.chosen_stores(layout) == ("versitygw",)
    assert cluster.environment(layout)["AGENTJOBS_S3_ENDPOINT"] == "http://10.87.0.1:9000"


def test_up_with_minio_alone_points_env_at_minio(layout: Layout) -> None:
    assert stores.choose_stores(layout, ["minio"]) == ("minio",)

    assert stores.chosen_stores(layout) == ("minio",)
    assert cluster.environment(layout)["AGENTJOBS_S3_ENDPOINT"] == "http://10.87.0.1:9010"


def test_a_later_up_adds_stores_and_down_forgets_them(layout: Layout) -> None:
    stores.choose_stores(layout, ["versitygw"])

    assert stores.choose_stores(layout, ["minio", "versitygw"]) == ("versitygw", "minio")
    environment = cluster.environment(layout, "minio")
    assert environment["AGENTJOBS_S3_ENDPOINT"] == "http://10.87.0.1:9010"
    assert environment["AGENTJOBS_S3_ACCESS_KEY"] == s3_credentials(layout).access_key

    stores.forget_stores(layout)
    assert stores.chosen_stores(layout) == ("versitygw",)


def test_an_unknown_store_is_refused_and_changes_nothing(layout: Layout) -> None:
    stores.choose_stores(layout, ["minio"])

    with pytest.raises(ValueError, match=r"unknown S3 store\(s\) \['ceph'\]"):
        stores.choose_stores(layout, ["ceph"])
    assert stores.chosen_stores(layout) == ("minio",)


def test_only_the_builds_of_the_named_binaries_run() -> None:
    without_minio = [b.module_dir for b in builds_for(["kube-apiserver", "etcd", "versitygw"])]

    assert without_minio == ["kubernetes", "etcd", "versitygw"]
    assert [b.module_dir for b in builds_for(["helm"])] == ["helm"]
    assert "minio" in [b.module_dir for b in builds_for(None)]
    with pytest.raises(KeyError, match="mc"):
        builds_for(["mc"])


def test_minio_is_stamped_with_its_pseudo_versions_commit_and_time() -> None:
    [minio] = builds_for(["minio"])

    assert minio.packages == {"minio": "github.com/minio/minio"}
    assert "-X github.com/minio/minio/cmd.Version=2026-02-12T20:18:48Z" in minio.ldflags
    assert "-X github.com/minio/minio/cmd.ShortCommitID=7aac2a2c5b7c" in minio.ldflags


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["down", "--s3", "minio"], "--s3 goes with up or env"),
        (["env", "--s3", "minio", "--s3", "versitygw"], "env takes one --s3 STORE"),
        (["up", "--s3", "ceph"], "invalid choice: 'ceph'"),
    ],
)
def test_the_command_line_refuses_s3_where_it_means_nothing(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)

    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_env_prints_the_exports_of_the_store_asked_for(
    layout: Layout, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTJOBS_CLUSTER_DIR", str(layout.root))

    assert cli.main(["env", "--s3", "minio"]) == 0
    assert "export AGENTJOBS_S3_ENDPOINT=http://10.87.0.1:9010\n" in capsys.readouterr().out
    assert cli.main(["env"]) == 0
    assert "export AGENTJOBS_S3_ENDPOINT=http://10.87.0.1:9000\n" in capsys.readouterr().out


def _status_by_component(layout: Layout) -> dict[str, str]:
    out = io.StringIO()
    assert cluster.status(layout, out) is False  # nothing runs here
    return {line.split()[0]: line.split(maxsplit=1)[1] for line in out.getvalue().splitlines()}


def test_status_expects_only_the_chosen_stores(layout: Layout) -> None:
    status = _status_by_component(layout)
    assert (status["versitygw"], status["minio"]) == ("stopped", "not chosen (up --s3 minio)")

    stores.choose_stores(layout, ["minio"])

    status = _status_by_component(layout)
    assert (status["minio"], status["versitygw"]) == ("stopped", "not chosen (up --s3 versitygw)")
