"""What a build reads, and the cache key made of it: the files of the build context that
.dockerignore lets through, by content and mode (never mtime), and whatever else the caller
says the result depends on (the Dockerfile, base image digests, the builder's version)."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnoreRule:
    pattern: re.Pattern[str]
    # A `!` rule lets back in what an earlier rule excluded.
    include: bool
    # The literal path the rule starts with, to know which excluded directories it may reopen.
    prefix: str


@dataclass(frozen=True)
class ContextFile:
    path: str  # relative, '/'-separated
    mode: int  # permission bits: COPY keeps them, so a chmod changes the image
    sha256: str  # of the content, or of the target for a symlink


def _translate(pattern: str) -> str:
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            regex += ".*"
            index += 2
        elif pattern[index] == "*":
            regex += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(pattern[index])
            index += 1
    return regex


def parse_dockerignore(text: str) -> list[IgnoreRule]:
    """The rules of a .dockerignore, as Docker reads them: one pattern a line, `#` comments,
    paths relative to the context (leading and trailing `/` dropped), `*`/`?` within one path
    element, `**` across any, a `!` line re-including, the last matching line deciding."""
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        include = line.startswith("!")
        pattern = os.path.normpath(line.removeprefix("!").strip()).strip("/")
        prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        rules.append(IgnoreRule(re.compile(_translate(pattern)), include, prefix))
    return rules


def excluded(path: str, rules: Sequence[IgnoreRule]) -> bool:
    """Whether the context leaves `path` out. A rule matching a parent directory matches the
    path too, as in Docker: `*` excludes everything, `!operator/` lets all of operator/ in."""
    parts = path.split("/")
    candidates = ["/".join(parts[:length]) for length in range(1, len(parts) + 1)]
    result = False
    for rule in rules:
        if any(rule.pattern.fullmatch(candidate) for candidate in candidates):
            result = not rule.include
    return result


def _may_reopen(directory: str, rules: Sequence[IgnoreRule]) -> bool:
    # An excluded directory is walked only if a `!` rule could let something under it back in.
    inside = directory + "/"
    return any(
        rule.include and (inside.startswith(rule.prefix) or rule.prefix.startswith(inside))
        for rule in rules
    )


def context_files(root: Path, rules: Sequence[IgnoreRule]) -> list[ContextFile]:
    """The files a build under `root` can see, sorted by path."""
    found = []
    for directory, subdirectories, names in os.walk(root):
        relative = Path(directory).relative_to(root).as_posix()
        base = "" if relative == "." else relative + "/"
        subdirectories[:] = sorted(
            name
            for name in subdirectories
            if not excluded(base + name, rules) or _may_reopen(base + name, rules)
        )
        for name in names:
            path = base + name
            if excluded(path, rules):
                continue
            full = Path(directory, name)
            if full.is_symlink():
                digest = hashlib.sha256(os.readlink(full).encode()).hexdigest()
            else:
                digest = hashlib.sha256(full.read_bytes()).hexdigest()
            found.append(ContextFile(path, full.lstat().st_mode & 0o7777, digest))
    return sorted(found, key=lambda file: file.path)


def read_context(root: Path) -> list[ContextFile]:
    """The context of a build at `root`, through its .dockerignore if it has one."""
    ignore = root / ".dockerignore"
    rules = parse_dockerignore(ignore.read_text()) if ignore.exists() else []
    return context_files(root, rules)


def cache_key(files: Iterable[ContextFile], inputs: Iterable[tuple[str, str]]) -> str:
    """A digest of the context files and of the other named inputs of a build. Each field is
    length-prefixed, so no two different sets of inputs can run together into one."""
    digest = hashlib.sha256()

    def field(value: str) -> None:
        data = value.encode()
        digest.update(len(data).to_bytes(8, "big") + data)

    named = sorted(inputs)
    field(str(len(named)))
    for name, value in named:
        field(name)
        field(value)
    for file in files:
        field(file.path)
        field(f"{file.mode:o}")
        field(file.sha256)
    return digest.hexdigest()
