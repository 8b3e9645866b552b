"""The committed CRDs are the ones the models generate, and their schemas are structural.

Cases: `crds/*.yaml` is not stale; no `$ref`, title, default or
`additionalProperties: false` is left; the CEL rules and printer columns the
issue asks for are present.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agentjobs.adapters import crd_files
from agentjobs.cli import main as agentjobs

CRDS = Path(__file__).parents[2] / "crds"


def test_the_committed_crds_are_not_stale() -> None:
    for name, text in crd_files.render().items():
        assert (CRDS / name).read_text() == text, f"crds/{name} is stale: run `agentjobs crds`"


def test_crds_check_reports_a_stale_file(tmp_path: Path) -> None:
    assert agentjobs(["crds", str(tmp_path)]) == 0
    assert agentjobs(["crds", "--check", str(tmp_path)]) == 0
    (tmp_path / "phases.yaml").write_text("stale\n")
    assert agentjobs(["crds", "--check", str(tmp_path)]) == 1


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _walk(item)]
    if isinstance(node, dict):
        return [node, *(found for value in node.values() for found in _walk(value))]
    return []


def _schema(name: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / name).read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def test_schemas_are_structural() -> None:
    for name in ("executions.yaml", "phases.yaml"):
        for node in _walk(_schema(name)):
            assert "$ref" not in node
            assert node.get("additionalProperties") is not False
            assert "title" not in node or not isinstance(node["title"], str)


def test_the_execution_schema_carries_its_cel_rules() -> None:
    rules = [
        rule["rule"]
        for node in _walk(_schema("executions.yaml"))
        for rule in node.get("x-kubernetes-validations", [])
    ]
    assert "self.all(p, self.exists_one(q, q.name == p.name))" in rules
    assert "has(self.prompt) != has(self.promptFrom)" in rules
    assert any("matches" in rule for rule in rules)


def test_printer_columns_match_the_issue() -> None:
    def columns(name: str) -> list[str]:
        crd = yaml.safe_load((CRDS / name).read_text())
        return [c["name"] for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]]

    assert columns("executions.yaml") == [
        "Status",
        "Current Phase",
        "Classification",
        "Outcome",
        "Deliverable",
        "Branch",
        "Cost",
        "Age",
    ]
    assert columns("phases.yaml") == [
        "Execution", "Status", "Report", "Outcome", "Exit", "Attempt", "Cost", "Age",
    ]  # fmt: skip
