"""Image references as a Dockerfile's FROM line and the kubelet read them."""

from __future__ import annotations

import re


def normalize(reference: str) -> str:
    """The full reference Docker and containerd's CRI mean by `reference`: `busybox` is
    docker.io/library/busybox:latest, `debian:bookworm-slim` docker.io/library/debian:...
    A first component with a `.` or `:`, or `localhost`, is a registry host."""
    name, _, tag = reference.partition("@")[0].rpartition(":")
    if not name or "/" in tag:
        name, tag = reference, "latest"
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    return f"{name}:{tag}"


_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def from_images(dockerfile: str) -> list[str]:
    """The images a Dockerfile builds on: each FROM's image, ARG defaults given before the
    first FROM substituted, normalized; neither `scratch` nor an earlier stage's name."""
    lines = re.sub(r"\\\n", " ", dockerfile).splitlines()
    arguments: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    global_scope = True
    for line in lines:
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        instruction = words[0].upper()
        if instruction == "ARG" and global_scope:
            name, _, default = words[1].partition("=")
            arguments[name] = default
        elif instruction == "FROM":
            operands = [word for word in words[1:] if not word.startswith("--")]
            global_scope = False
            image = _VARIABLE.sub(lambda m: arguments.get(m[1] or m[2], ""), operands[0])
            if image != "scratch" and image not in stages and normalize(image) not in images:
                images.append(normalize(image))
            if len(operands) == 3 and operands[1].upper() == "AS":
                stages.add(operands[2])
    return images
