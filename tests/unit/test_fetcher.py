"""The input fetcher on real temp trees, with an in-memory store (R35, issue 15).

Cases: the artifacts a checked manifest lists land under input/, nested, each
checked against its SHA-256; a manifest that does not hash to the spec's
SHA-256, or is missing, is refused and nothing is written; a manifest with a
`..` path or a key outside the handed-on output/ writes nothing anywhere; a
symlink already in input/ on the way to a file is refused, not followed; a
symlink at a file's own name is replaced, its target untouched; a symlinked
input/ itself is refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentjobs.adapters import input_dir, output_dir
from agentjobs.contract.artifacts import handoff
from agentjobs.models.storage import HandoffManifest, HandoffRef, InputArtifact, ObjectLocation
from agentjobs.sidecars import fetcher

ROOT = "ns/run/0-draft/attempt-1"


class MemoryStore:
    """``get_bytes`` and ``download`` as the real stores do them, from a dict."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def get_bytes(self, location: ObjectLocation) -> bytes | None:
        return self.objects.get(location.key)

    def download(self, location: ObjectLocation, destination: Path, *, sha256: str) -> None:
        data = self.objects[location.key]
        partial = destination.with_name(destination.name + ".partial")
        partial.write_bytes(data)
        if hashlib.sha256(data).hexdigest() != sha256:
            partial.unlink()
            raise ValueError(f"{location.url} does not match its recorded SHA-256")
        partial.replace(destination)

    def prepare(self, method: str, locations: list[ObjectLocation]) -> None:
        pass  # a presigning store asks for its URLs here


def handed_on(
    store: MemoryStore, files: dict[str, bytes], keys: dict[str, str] | None = None
) -> HandoffRef:
    artifacts = []
    for path, data in files.items():
        key = (keys or {}).get(path, f"{ROOT}/output/{path}")
        store.objects[key] = data
        artifacts.append(
            InputArtifact(
                path=path,
                url=f"s3://b/{key}",
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
            )
        )
    manifest = HandoffManifest(artifacts=artifacts).model_dump_json(by_alias=True).encode()
    store.objects[f"{ROOT}/artifacts.json"] = manifest
    return HandoffRef(
        manifest=f"s3://b/{ROOT}/artifacts.json",
        sha256=hashlib.sha256(manifest).hexdigest(),
        count=len(artifacts),
    )


def fetch(tmp_path: Path, store: MemoryStore, inputs: HandoffRef) -> Path:
    workspace = tmp_path / "workspace"
    fetcher.fetch(
        store,  # type: ignore[arg-type]
        inputs,
        input_dir=workspace / "input",
        output_dir=workspace / "output",
    )
    return workspace / "input"


def tree(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_r35_every_listed_artifact_lands_under_input(tmp_path: Path) -> None:
    store = MemoryStore()
    inputs = handed_on(store, {"plan.md": b"the plan", "src/deep/x.py": b"print()"})
    assert tree(fetch(tmp_path, store, inputs)) == {
        "plan.md": b"the plan",
        "src/deep/x.py": b"print()",
    }


def test_a_manifest_that_is_not_the_one_named_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    store = MemoryStore()
    inputs = handed_on(store, {"plan.md": b"the plan"})
    store.objects[f"{ROOT}/artifacts.json"] += b" "
    with pytest.raises(fetcher.HandoffRefused, match="does not match its recorded SHA-256"):
        fetch(tmp_path, store, inputs)
    del store.objects[f"{ROOT}/artifacts.json"]
    with pytest.raises(fetcher.HandoffRefused, match="does not exist"):
        fetch(tmp_path, store, inputs)
    assert tree(tmp_path) == {}


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("../../escape.md", f"{ROOT}/output/escape.md"),
        ("ok.md", f"{ROOT}/output/../../../../elsewhere/ok.md"),
        ("ok.md", "ns/other-run/0-x/attempt-1/output/ok.md"),
    ],
)
def test_input_keys_with_dot_dot_write_nothing_anywhere(
    tmp_path: Path, path: str, key: str
) -> None:
    store = MemoryStore()
    inputs = handed_on(store, {"first.md": b"x", path: b"escaped"}, keys={path: key})
    with pytest.raises(handoff.UnsafeArtifactPath):
        fetch(tmp_path, store, inputs)
    assert tree(tmp_path) == {}


def test_a_symlink_already_in_input_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "workspace" / "input").mkdir(parents=True)
    (tmp_path / "workspace" / "input" / "sub").symlink_to(outside, target_is_directory=True)
    store = MemoryStore()
    inputs = handed_on(store, {"sub/x.md": b"redirected?"})
    with pytest.raises(input_dir.UnsafeDestination, match="'sub' on its way"):
        fetch(tmp_path, store, inputs)
    assert list(outside.iterdir()) == []


def test_a_symlink_at_a_files_own_name_is_replaced_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    (tmp_path / "workspace" / "input").mkdir(parents=True)
    (tmp_path / "workspace" / "input" / "x.md").symlink_to(target)
    (tmp_path / "workspace" / "input" / "x.md.partial").symlink_to(target)
    store = MemoryStore()
    landed = fetch(tmp_path, store, handed_on(store, {"x.md": b"the input"}))
    assert not (landed / "x.md").is_symlink()
    assert (landed / "x.md").read_bytes() == b"the input"
    assert target.read_bytes() == b"keep me"


def test_a_symlinked_input_directory_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "input").symlink_to(elsewhere, target_is_directory=True)
    store = MemoryStore()
    with pytest.raises(output_dir.NotADirectory):
        fetch(tmp_path, store, handed_on(store, {"x.md": b"x"}))
    assert list(elsewhere.iterdir()) == []
