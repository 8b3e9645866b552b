"""devcluster.images' pure parts: what a build reads, its cache key, and the names it uses.

Cases:
- the key changes with a context file's content, its mode, a new file and another base
  digest, and not with a file's mtime alone nor a file .dockerignore leaves out;
- the repository's .dockerignore lets pyproject.toml, README.md and operator/ in, and
  neither __pycache__ nor the virtualenv;
- .dockerignore rules: the last match decides, `**` spans directories, `!` re-includes;
- FROM lines give the base images, ARG defaults substituted, stages and scratch skipped;
- image names are normalized as the kubelet does (busybox is docker.io/library/busybox:latest);
- the Debian mirror is the host's deb822 stanza for the suite;
- an archive's index lists the image once under each name, for ctr and for buildah; packing
  the same layout twice gives the same bytes, and the archive gives its image's ID;
- the operator image carries the chart's default image name, each base is built before its
  users, and every FROM of ours names an image of the catalog;
- a second build waits for the first one's lock; the archives of an image used last are kept.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from devcluster.images import build, catalog
from devcluster.images.archive import image_id, index_for, pack
from devcluster.images.context import (
    cache_key,
    excluded,
    parse_dockerignore,
    read_context,
)
from devcluster.images.debian import mirror
from devcluster.images.names import from_images, normalize

REPOSITORY = Path(__file__).resolve().parents[3]


@pytest.fixture
def context(tmp_path: Path) -> Path:
    (tmp_path / "operator").mkdir()
    (tmp_path / "operator" / "main.py").write_text("print('hi')\n")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / ".dockerignore").write_text("*\n!pyproject.toml\n!operator/\n**/*.pyc\n")
    return tmp_path


def key(root: Path, base: str = "sha256:1") -> str:
    return cache_key(read_context(root), [("base", base)])


def test_the_key_follows_content_not_mtime(context: Path) -> None:
    before = key(context)
    os.utime(context / "operator" / "main.py", (1, 1))
    assert key(context) == before
    (context / "operator" / "main.py").write_text("print('bye')\n")
    assert key(context) != before


def test_the_key_follows_the_mode(context: Path) -> None:
    before = key(context)
    (context / "operator" / "main.py").chmod(0o755)
    assert key(context) != before


def test_the_key_follows_new_files_the_build_sees_only(context: Path) -> None:
    before = key(context)
    (context / "tests").mkdir()
    (context / "tests" / "test_x.py").write_text("")
    (context / "operator" / "main.cpython-311.pyc").write_bytes(b"\0")
    assert key(context) == before
    (context / "operator" / "new.py").write_text("")
    assert key(context) != before


def test_the_key_follows_the_base_and_the_inputs(context: Path) -> None:
    files = read_context(context)
    assert key(context, "sha256:1") != key(context, "sha256:2")
    # Each field is length-prefixed: moving a character across a boundary changes the key.
    assert cache_key(files, [("ab", "c")]) != cache_key(files, [("a", "bc")])


def test_the_repositorys_context_is_the_package_and_its_metadata() -> None:
    paths = [file.path for file in read_context(REPOSITORY)]
    assert "pyproject.toml" in paths and "README.md" in paths
    assert "operator/agentjobs/__init__.py" in paths
    assert not [path for path in paths if "__pycache__" in path]
    assert {path.split("/")[0] for path in paths} == {"pyproject.toml", "README.md", "operator"}


def test_dockerignore_rules() -> None:
    rules = parse_dockerignore("# a comment\n*.log\n!keep.log\ndocs/**/draft*\n/build/\n")
    assert excluded("a.log", rules)
    assert not excluded("keep.log", rules)
    assert not excluded("sub/a.log", rules)  # `*` stays within one path element
    assert excluded("docs/draft.md", rules)
    assert excluded("docs/x/y/draft-2.md", rules)
    assert excluded("build/out/bin", rules)  # a parent directory's match
    assert not excluded("src/build", rules)


def test_from_lines_give_the_bases() -> None:
    dockerfile = (
        "ARG BASE=python:3.11-slim\n"
        "FROM ${BASE} AS build\n"
        "ARG LATER=ignored\n"
        "FROM build AS test\n"
        "FROM scratch\n"
        "FROM --platform=linux/amd64 \\\n  debian:bookworm-slim\n"
        "FROM $BASE\n"
    )
    assert from_images(dockerfile) == [
        "docker.io/library/python:3.11-slim",
        "docker.io/library/debian:bookworm-slim",
    ]
    assert from_images((REPOSITORY / "Dockerfile").read_text()) == [
        "docker.io/library/python:3.11.11-slim-bookworm"
    ]


@pytest.mark.parametrize(
    ("reference", "full"),
    [
        ("busybox", "docker.io/library/busybox:latest"),
        ("busybox:1.36", "docker.io/library/busybox:1.36"),
        ("library/debian:bookworm-slim", "docker.io/library/debian:bookworm-slim"),
        ("ghcr.io/agentjobs/agentjobs:0.1.0", "ghcr.io/agentjobs/agentjobs:0.1.0"),
        ("localhost:5000/agent", "localhost:5000/agent:latest"),
        ("localhost/agentjobs/pause:1", "localhost/agentjobs/pause:1"),
    ],
)
def test_names_are_normalized_as_the_kubelet_does(reference: str, full: str) -> None:
    assert normalize(reference) == full


def test_the_mirror_is_the_hosts_stanza_for_the_suite() -> None:
    sources = (
        "Types: deb\n# a comment: URIs: http://wrong\nURIs: http://deb.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\nSigned-By: /k.gpg\n\n"
        "Types: deb\nURIs: http://security.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n"
    )
    assert mirror(sources, "bookworm") == "http://deb.example/debian"
    assert mirror(sources, "bookworm-security") == "http://security.example/debian-security"
    with pytest.raises(ValueError, match="trixie"):
        mirror(sources, "trixie")


def test_an_archive_lists_the_image_under_each_name() -> None:
    manifest = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": "sha256:ab",
        "size": 3,
        "annotations": {"org.opencontainers.image.ref.name": "localhost/x:1"},
    }
    names = ["docker.io/library/busybox:latest", "docker.io/library/busybox:1.36"]
    index = index_for(manifest, names)
    assert [entry["digest"] for entry in index["manifests"]] == ["sha256:ab", "sha256:ab"]
    assert [entry["annotations"] for entry in index["manifests"]] == [
        {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name}
        for name in names
    ]


def test_the_operator_image_is_the_charts_default() -> None:
    chart = REPOSITORY / "charts" / "agentjobs"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    version = yaml.safe_load((chart / "Chart.yaml").read_text())["appVersion"]
    tag = values["image"]["tag"] or version
    default = f"{values['image']['repository']}:{tag}"
    assert default == catalog.OPERATOR_IMAGE
    assert catalog.OPERATOR.names == (catalog.OPERATOR_IMAGE,)


def test_bases_are_built_before_their_users() -> None:
    assert build.with_bases([catalog.OPERATOR]) == [
        catalog.DEBIAN,
        catalog.PYTHON,
        catalog.OPERATOR,
    ]
    assert build.with_bases([catalog.PAUSE, catalog.EXAMPLE_AGENT]) == [
        catalog.PAUSE,
        catalog.DEBIAN,
        catalog.EXAMPLE_AGENT,
    ]


def test_every_base_is_an_image_of_the_catalog() -> None:
    names = {name for recipe in catalog.RECIPES for name in recipe.names}
    for recipe in catalog.RECIPES:
        assert set(from_images(recipe.dockerfile.read_text())) <= names, recipe.slug


def test_a_second_build_waits_for_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "IMAGES_DIR", tmp_path)
    entered = threading.Event()
    second_log = io.StringIO()

    def second() -> None:
        with build.build_lock(second_log):
            entered.set()

    with build.build_lock(io.StringIO()):
        thread = threading.Thread(target=second)
        thread.start()
        assert not entered.wait(0.5)
    thread.join(5)
    assert entered.is_set()
    assert "waiting for another build" in second_log.getvalue()


def test_the_archives_used_last_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "ARCHIVES_DIR", tmp_path)
    names = [f"python-{index:020d}.tar" for index in range(6)]
    for used, name in enumerate(names):
        (tmp_path / name).touch()
        os.utime(tmp_path / name, (used, used))
    (tmp_path / "python-base-00000000000000000000.tar").touch()  # another image's
    build._forget(catalog.PYTHON)
    kept = {"python-base-00000000000000000000.tar", *names[-build.KEPT_ARCHIVES :]}
    assert {path.name for path in tmp_path.iterdir()} == kept


def test_an_archive_packs_the_same_bytes_and_names_its_image(tmp_path: Path) -> None:
    layout = tmp_path / "layout"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    config = b'{"config": {}}'
    config_digest = hashlib.sha256(config).hexdigest()
    manifest = json.dumps({"config": {"digest": f"sha256:{config_digest}"}}).encode()
    manifest_digest = hashlib.sha256(manifest).hexdigest()
    (blobs / config_digest).write_bytes(config)
    (blobs / manifest_digest).write_bytes(manifest)
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    descriptor = {"mediaType": "m", "digest": f"sha256:{manifest_digest}", "size": len(manifest)}
    (layout / "index.json").write_text(json.dumps({"manifests": [descriptor]}))
    names = ["localhost/x:1", "localhost/x:latest"]
    first, second = tmp_path / "first.tar", tmp_path / "second.tar"
    pack(layout, names, first)
    os.utime(blobs / config_digest, (5, 5))
    pack(layout, names, second)
    assert first.read_bytes() == second.read_bytes()
    assert image_id(first) == config_digest
    with tarfile.open(first) as archive:
        assert sorted(archive.getnames()) == sorted(
            ["oci-layout", "index.json", "blobs", "blobs/sha256"]
            + [f"blobs/sha256/{digest}" for digest in (config_digest, manifest_digest)]
        )
