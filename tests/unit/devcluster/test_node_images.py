"""Image references resolve through the node's image table like a registry would."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from devcluster.node.images import (
    ImageNotFoundError,
    ImageSpec,
    ImageTableFiles,
    container_argv,
    parse_reference,
    table_from_documents,
)

REPO_TABLE = Path(__file__).resolve().parents[3] / "devcluster" / "images.yaml"


@pytest.mark.parametrize(
    ("reference", "name", "display"),
    [
        ("busybox", "docker.io/library/busybox", "docker.io/library/busybox:latest"),
        ("busybox:1.36", "docker.io/library/busybox", "docker.io/library/busybox:1.36"),
        ("library/busybox", "docker.io/library/busybox", "docker.io/library/busybox:latest"),
        (
            "ghcr.io/agentjobs/agentjobs:dev",
            "ghcr.io/agentjobs/agentjobs",
            "ghcr.io/agentjobs/agentjobs:dev",
        ),
        ("localhost:5000/x/y", "localhost:5000/x/y", "localhost:5000/x/y:latest"),
        ("x@sha256:abc", "docker.io/library/x", "docker.io/library/x@sha256:abc"),
    ],
)
def test_parse_reference(reference: str, name: str, display: str) -> None:
    parsed = parse_reference(reference)
    assert (parsed.name, parsed.display) == (name, display)


def test_exact_tag_entry_wins_over_name_entry() -> None:
    table = table_from_documents(
        [("a", {"images": {"busybox": {"cmd": ["sh"]}, "busybox:odd": {"cmd": ["odd"]}}})], {}
    )
    assert table.lookup("docker.io/library/busybox:1.0").cmd == ("sh",)
    assert table.lookup("busybox:odd").cmd == ("odd",)
    with pytest.raises(ImageNotFoundError):
        table.lookup("nosuchimage:1")


def test_later_file_overrides_and_placeholders_expand() -> None:
    table = table_from_documents(
        [
            ("a", {"images": {"x": {"cmd": "one"}}}),
            ("b", {"images": {"x": {"entrypoint": ["{bin}/tool"], "env": {"A": "{bin}"}}}}),
        ],
        {"bin": "/venv/bin"},
    )
    spec = table.lookup("x")
    assert spec.entrypoint == ("/venv/bin/tool",) and spec.cmd == ()
    assert dict(spec.env) == {"A": "/venv/bin"}


def test_unknown_keys_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown keys"):
        table_from_documents([("a", {"images": {"x": {"comand": ["sh"]}}})], {})


def test_command_and_args_follow_kubernetes_rules() -> None:
    spec = ImageSpec(entrypoint=("ep",), cmd=("c1", "c2"))
    assert container_argv(spec, None, None) == ["ep", "c1", "c2"]
    assert container_argv(spec, None, ["a"]) == ["ep", "a"]
    assert container_argv(spec, ["cmd"], None) == ["cmd"]
    assert container_argv(spec, ["cmd"], ["a"]) == ["cmd", "a"]


def test_repository_table_has_project_image_and_busybox() -> None:
    table = ImageTableFiles([REPO_TABLE])
    project = table.lookup("ghcr.io/agentjobs/agentjobs:0.1.0")
    assert project.entrypoint == (str(Path(sys.executable).parent / "agentjobs"),)
    assert table.lookup("busybox:1.36").cmd == ("sh",)


def test_table_files_reload_when_changed(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    table = ImageTableFiles([REPO_TABLE, extra])
    with pytest.raises(ImageNotFoundError):
        table.lookup("example.com/tool")
    extra.write_text("images:\n  example.com/tool:\n    cmd: [tool]\n")
    assert table.lookup("example.com/tool:2").cmd == ("tool",)
