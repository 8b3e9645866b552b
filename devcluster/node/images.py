"""The image table: which local program a container image stands for.

There is no container runtime here, so an image reference is looked up in one
or more YAML files (see devcluster/images.yaml for the schema) that say how a
container of that image runs as a local process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_DOMAIN = "docker.io"


@dataclass(frozen=True)
class ImageReference:
    """A parsed image reference: canonical repository name plus tag/digest."""

    name: str
    tag: str | None
    digest: str | None

    @property
    def display(self) -> str:
        """How the kubelet shows the image in a container status."""
        if self.digest:
            return f"{self.name}@{self.digest}"
        return f"{self.name}:{self.tag or 'latest'}"


def parse_reference(reference: str) -> ImageReference:
    """Parse `busybox`, `ghcr.io/x/y:1.0` or `x@sha256:...` the way docker does."""
    rest = reference.strip()
    digest: str | None = None
    if "@" in rest:
        rest, digest = rest.split("@", 1)
    tag: str | None = None
    last_slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > last_slash:
        rest, tag = rest[:colon], rest[colon + 1 :]
    parts = rest.split("/")
    first = parts[0]
    has_domain = len(parts) > 1 and ("." in first or ":" in first or first == "localhost")
    if not has_domain:
        parts = [DEFAULT_DOMAIN, *parts]
    if parts[0] == DEFAULT_DOMAIN and len(parts) == 2:
        parts = [DEFAULT_DOMAIN, "library", parts[1]]
    return ImageReference(name="/".join(parts).lower(), tag=tag, digest=digest)


@dataclass(frozen=True)
class ImageSpec:
    """How containers of one image run: the image's config, in effect."""

    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    working_dir: str | None = None
    user: str | None = None
    image_id: str = ""


class ImageNotFoundError(LookupError):
    """The image is not in the table: the node reports ErrImagePull."""


def _substitute(text: str, placeholders: Mapping[str, str]) -> str:
    for key, value in placeholders.items():
        text = text.replace("{" + key + "}", value)
    return text


def default_placeholders() -> dict[str, str]:
    """`{bin}` is the venv's bin dir (where `agentjobs` is installed)."""
    return {
        "bin": os.path.dirname(sys.executable),
        "python": sys.executable,
        "host_path": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
    }


def _string_list(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"{where}: expected a string or a list of strings")


def spec_from_entry(
    entry: Mapping[str, Any], where: str, placeholders: Mapping[str, str]
) -> ImageSpec:
    """Build an ImageSpec from one table entry, checking its shape."""
    unknown = set(entry) - {"entrypoint", "cmd", "env", "workingDir", "user"}
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    env_raw = entry.get("env") or {}
    if not isinstance(env_raw, dict):
        raise ValueError(f"{where}: env must be a mapping")
    env = tuple((str(k), _substitute(str(v), placeholders)) for k, v in env_raw.items())
    working_dir = entry.get("workingDir")
    user = entry.get("user")
    canonical = json.dumps(entry, sort_keys=True, default=str).encode()
    return ImageSpec(
        entrypoint=tuple(
            _substitute(s, placeholders) for s in _string_list(entry.get("entrypoint"), where)
        ),
        cmd=tuple(_substitute(s, placeholders) for s in _string_list(entry.get("cmd"), where)),
        env=env,
        working_dir=_substitute(str(working_dir), placeholders) if working_dir else None,
        user=str(user) if user is not None else None,
        image_id="sha256:" + hashlib.sha256(canonical).hexdigest(),
    )


@dataclass
class ImageTable:
    """Entries keyed by canonical name, and by `name:tag` for exact entries."""

    by_name: dict[str, ImageSpec] = field(default_factory=dict)
    by_name_and_tag: dict[str, ImageSpec] = field(default_factory=dict)

    def add(self, key: str, spec: ImageSpec) -> None:
        ref = parse_reference(key)
        if ref.tag is not None:
            self.by_name_and_tag[f"{ref.name}:{ref.tag}"] = spec
        else:
            self.by_name[ref.name] = spec

    def lookup(self, reference: str) -> ImageSpec:
        ref = parse_reference(reference)
        exact = self.by_name_and_tag.get(f"{ref.name}:{ref.tag or 'latest'}")
        if exact is not None:
            return exact
        spec = self.by_name.get(ref.name)
        if spec is None:
            raise ImageNotFoundError(ref.display)
        return spec


def table_from_documents(
    documents: Sequence[tuple[str, object]], placeholders: Mapping[str, str]
) -> ImageTable:
    """Merge parsed YAML documents in order; a later file overrides an earlier one."""
    table = ImageTable()
    for source, document in documents:
        if document is None:
            continue
        if not isinstance(document, dict) or not isinstance(document.get("images"), dict):
            raise ValueError(f"{source}: expected a mapping with an `images` mapping")
        for key, entry in document["images"].items():
            if not isinstance(entry, dict):
                entry = {}
            table.add(str(key), spec_from_entry(entry, f"{source}: {key}", placeholders))
    return table


class ImageTableFiles:
    """The table loaded from files, reloaded whenever one of them changes."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self._stamp: tuple[float, ...] = ()
        self._table = ImageTable()
        self.reload_if_changed()

    def _current_stamp(self) -> tuple[float, ...]:
        return tuple(p.stat().st_mtime if p.exists() else -1.0 for p in self.paths)

    def reload_if_changed(self) -> None:
        stamp = self._current_stamp()
        if stamp == self._stamp:
            return
        documents = [
            (str(p), yaml.safe_load(p.read_text()) if p.exists() else None) for p in self.paths
        ]
        self._table = table_from_documents(documents, default_placeholders())
        self._stamp = stamp

    def lookup(self, reference: str) -> ImageSpec:
        # Keep serving the last good table while a file is being edited.
        with contextlib.suppress(OSError, ValueError, yaml.YAMLError):
            self.reload_if_changed()
        return self._table.lookup(reference)


def container_argv(
    spec: ImageSpec, command: Sequence[str] | None, args: Sequence[str] | None
) -> list[str]:
    """Kubernetes' rule: `command` replaces ENTRYPOINT, `args` replaces CMD."""
    if command:
        return [*command, *(args or [])]
    if args:
        return [*spec.entrypoint, *args]
    return [*spec.entrypoint, *spec.cmd]
