"""R53: every object name in the Execution and Phase schemas has the form Kubernetes gives
that kind's names (the real API server's refusals are in tests/security/test_object_names.py).

Cases: the name-bearing fields of each CRD are exactly the ones listed here, so a new
one fails until it is given a form; each refuses `../x`, `a/b`, `.`, `..`, uppercase
and a name one character too long, and takes a name of its kind; a DNS label field
refuses a dot; the operator still parses a name the schema refuses (an object admitted
under an older schema), so that its path builder, not a parse error, decides.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentjobs.models.kubernetes import DNS_LABEL, DNS_SUBDOMAIN
from agentjobs.models.resources import PhaseSpec

CRDS = Path(__file__).parents[2] / "crds"
# A phase's and a repository's own names have their CEL rules (a repository's is its
# directory under /workspace); the pod's env[] entries are variables, not objects.
OWN_NAMES = ("name", "phases[].name", "repositories[].name")
VARIABLES = "env[].name"
SETTINGS = [
    "env[].valueFrom.secretKeyRef.name",
    "env[].valueFrom.configMapKeyRef.name",
    "env[].valueFrom.resourceFieldRef.containerName",
    "envFrom[].configMapRef.name",
    "envFrom[].secretRef.name",
    "serviceAccountName",
    "outcome.rubricFrom.configMapKeyRef.name",
    "outcome.grader.env[].valueFrom.secretKeyRef.name",
    "outcome.grader.env[].valueFrom.configMapKeyRef.name",
    "outcome.grader.env[].valueFrom.resourceFieldRef.containerName",
    "outcome.grader.envFrom[].configMapRef.name",
    "outcome.grader.envFrom[].secretRef.name",
    "imagePullSecrets[].name",
    *(
        f"affinity.{kind}.{term}.namespaces[]"
        for kind in ("podAffinity", "podAntiAffinity")
        for term in (
            "requiredDuringSchedulingIgnoredDuringExecution[]",
            "preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm",
        )
    ),
    "priorityClassName",
    "runtimeClassName",
]
EXECUTION_NAMES = sorted(
    [f"phases[].{s}" for s in SETTINGS]
    + ["phases[].promptFrom.configMapKeyRef.name"]
    + [f"defaults.{s}" for s in SETTINGS]
    + ["notify[].secretRef.name", "resumeFrom.name", "repositories[].credentialsSecret.name"]
)
PHASE_NAMES = sorted([*SETTINGS, "promptFrom.configMapKeyRef.name", "executionName"])
LABELS = ("containerName", "namespaces[]")


def _spec_schema(name: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / name).read_text())
    spec: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return spec["properties"]["spec"]  # type: ignore[no-any-return]


def _strings(node: dict[str, Any], path: str = "") -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if node.get("type") == "string":
        found[path] = node
    for key, child in (node.get("properties") or {}).items():
        found.update(_strings(child, f"{path}.{key}" if path else key))
    if "items" in node:
        found.update(_strings(node["items"], f"{path}[]"))
    return found


def _name_fields(crd: str) -> dict[str, dict[str, Any]]:
    def names_an_object(path: str) -> bool:
        last = path.rsplit(".", 1)[-1]
        return last in ("name", "namespaces[]") or last.endswith("Name")

    return {
        path: node
        for path, node in _strings(_spec_schema(crd)).items()
        if names_an_object(path) and path not in OWN_NAMES and not path.endswith(VARIABLES)
    }


def _admits(node: dict[str, Any], value: str) -> bool:
    return len(value) <= node["maxLength"] and re.search(node["pattern"], value) is not None


@pytest.mark.parametrize(("crd", "expected"), [("executions.yaml", EXECUTION_NAMES),
                                               ("phases.yaml", PHASE_NAMES)])  # fmt: skip
def test_the_name_bearing_fields_are_exactly_the_listed_ones(crd: str, expected: list[str]) -> None:
    assert sorted(_name_fields(crd)) == expected


@pytest.mark.parametrize("crd", ["executions.yaml", "phases.yaml"])
def test_every_name_field_refuses_what_is_not_a_name_of_its_kind(crd: str) -> None:
    for path, node in _name_fields(crd).items():
        label = path.endswith(LABELS)
        assert node["pattern"] == (DNS_LABEL if label else DNS_SUBDOMAIN), path
        assert node["maxLength"] == (63 if label else 253), path
        for bad in (
            "../x",
            "a/b",
            ".",
            "..",
            "Prompts",
            "a_b",
            "-a",
            "a-",
            "x" * (64 if label else 254),
        ):
            assert not _admits(node, bad), (path, bad)
        assert _admits(node, "team-prompts-2"), path
        assert _admits(node, "x" * node["maxLength"]), path
        assert _admits(node, "team.prompts") is not label, path


def test_the_operator_still_parses_a_name_the_schema_refuses() -> None:
    spec = PhaseSpec.model_validate(
        {
            "executionName": "e",
            "index": 0,
            "name": "p",
            "image": "i",
            "promptFrom": {"configMapKeyRef": {"name": "../../victim/secrets/x", "key": "k"}},
        }
    )
    assert spec.prompt_from is not None
    assert spec.prompt_from.config_map_key_ref.name == "../../victim/secrets/x"
