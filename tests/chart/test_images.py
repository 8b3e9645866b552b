"""The image definitions: conventional, non-root, and serving the commands that run them.

Their text is checked here (tests/images builds them). Cases: each Dockerfile's base image is
pinned to an exact tag (not `latest`), its final stage runs as the numeric non-root user 65532,
and its ENTRYPOINT is what the chart and the examples expect; the agentjobs CLI has every
subcommand the image serves (the operator, the harvester, the input fetcher); .dockerignore
keeps the build context to what the image needs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentjobs.cli import COMMANDS
from devcluster.images.names import normalize
from tests.chart.conftest import REPO

AGENT = REPO / "manifests" / "examples" / "agent"
DOCKERFILES = {
    "operator": (REPO / "Dockerfile", '["agentjobs"]'),
    "example agent": (AGENT / "Dockerfile", '["/usr/local/bin/agent.sh"]'),
}


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    lines = re.sub(r"\\\n", " ", dockerfile.read_text()).splitlines()
    found = [line.strip().split(None, 1) for line in lines if line.strip()]
    return [(i[0].upper(), i[1] if len(i) > 1 else "") for i in found if not i[0].startswith("#")]


@pytest.mark.parametrize("name", DOCKERFILES)
def test_the_dockerfile_is_pinned_non_root_and_has_the_expected_entrypoint(name: str) -> None:
    path, entrypoint = DOCKERFILES[name]
    steps = instructions(path)
    text = path.read_text()
    bases = [value.split()[0] for key, value in steps if key == "FROM"]
    args = dict(re.findall(r"^ARG (\w+)=(\S+)$", text, flags=re.MULTILINE))
    for base in bases:
        resolved = args.get(base.strip("${}"), base)
        assert "@sha256:" in resolved or not normalize(resolved).endswith(":latest"), resolved
    final = steps[max(i for i, (key, _) in enumerate(steps) if key == "FROM") :]
    users = [value for key, value in final if key == "USER"]
    assert users == ["65532:65532"]
    assert ("ENTRYPOINT", entrypoint) in final


def test_the_cli_serves_every_command_the_image_runs() -> None:
    assert {"run", "harvest", "fetch-inputs", "artifacts"} <= set(COMMANDS)


def test_the_build_context_is_only_what_the_image_needs() -> None:
    lines = (REPO / ".dockerignore").read_text().split()
    assert lines[lines.index("*") :][:4] == ["*", "!pyproject.toml", "!README.md", "!operator/"]
    copied = [v for k, v in instructions(REPO / "Dockerfile") if k == "COPY" and "--from" not in v]
    assert copied == ["pyproject.toml README.md ./", "operator ./operator"]
