"""CustomResourceDefinitions generated from the resource models.

Pydantic's JSON schema is turned into a Kubernetes structural schema:
references inlined, titles and defaults dropped, ``X | None`` read as an
optional ``X``, and ``additionalProperties: false`` left out (Kubernetes
refuses it beside ``properties``; unknown fields are pruned, and rejected by
``kubectl``'s strict field validation).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agentjobs.models import resource_status, resources, scheduling

_DROPPED_KEYS = {"title", "default", "$defs"}


def _structural(schema: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_structural(item, definitions) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        target = definitions[schema["$ref"].rsplit("/", 1)[-1]]
        extra = {key: value for key, value in schema.items() if key != "$ref"}
        return _structural({**target, **extra}, definitions)
    options = schema.get("anyOf")
    if options and {"type": "null"} in options:
        rest = [option for option in options if option != {"type": "null"}]
        merged = {key: value for key, value in schema.items() if key != "anyOf"}
        if len(rest) == 1:
            return _structural({**rest[0], **merged}, definitions)
        return _structural({**merged, "anyOf": rest}, definitions)
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED_KEYS or (key == "additionalProperties" and value is False):
            continue
        if key == "properties":
            converted[key] = {name: _structural(sub, definitions) for name, sub in value.items()}
        else:
            converted[key] = _structural(value, definitions)
    return converted


def structural_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema (by alias) as a Kubernetes structural schema."""
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    result: dict[str, Any] = _structural(schema, schema.get("$defs", {}))
    return result


def without_transition_rules(schema: Any) -> Any:
    """``schema`` without the CEL rules that compare an object with its former self: an
    Execution's template is no Execution yet, and may be changed at will."""
    if isinstance(schema, list):
        return [without_transition_rules(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept = {key: without_transition_rules(value) for key, value in schema.items()}
    rules = kept.pop("x-kubernetes-validations", None)
    if rules:
        staying = [rule for rule in rules if "oldSelf" not in rule["rule"]]
        if staying:
            kept["x-kubernetes-validations"] = staying
    return kept


def _resource_schema(
    spec: dict[str, Any], status: type[BaseModel] | None, root: dict[str, Any]
) -> dict[str, Any]:
    properties = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if status is not None:
        properties["status"] = structural_schema(status)
    return {"type": "object", "required": ["spec"], "properties": properties, **root}


def _definition(
    *,
    kind: str,
    plural: str,
    short_name: str,
    spec: dict[str, Any],
    status: type[BaseModel] | None,
    columns: list[dict[str, Any]],
    root: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{resources.GROUP}"},
        "spec": {
            "group": resources.GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": [short_name],
                "categories": ["agentjobs"],
            },
            "versions": [
                {
                    "name": resources.VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}} if status is not None else {},
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": _resource_schema(spec, status, root or {})},
                }
            ],
        },
    }


def _column(name: str, path: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "type": kind, "jsonPath": path}


AGE = _column("Age", ".metadata.creationTimestamp", "date")
# R68: dollars the runs cost, as the CLI reported or the price table gave (empty: unknown).
COST = _column("Cost", ".status.usage.costUsd", "number")


def custom_resource_definitions() -> dict[str, dict[str, Any]]:
    """Every CRD of the project, by file name."""
    return {
        "executions.yaml": _definition(
            kind="Execution",
            plural="executions",
            short_name="aex",
            spec=structural_schema(resources.ExecutionSpec),
            status=resource_status.ExecutionResourceStatus,
            columns=[
                _column("Status", ".status.status"),
                _column("Current Phase", ".status.currentPhase"),
                _column("Classification", ".status.failureClassification"),
                _column("Outcome", ".status.outcome"),
                _column("Deliverable", ".status.deliverableProduced", "boolean"),
                # R66: the work branch of the first repository (most Executions have one).
                _column("Branch", ".status.repositories[0].branch"),
                COST,
                AGE,
            ],
        ),
        "phases.yaml": _definition(
            kind="Phase",
            plural="phases",
            short_name="aph",
            spec=structural_schema(resources.PhaseSpec),
            status=resource_status.PhaseResourceStatus,
            columns=[
                _column("Execution", ".spec.executionName"),
                _column("Status", ".status.status"),
                _column("Report", ".status.report.state"),
                _column("Outcome", ".status.outcome.result"),
                _column("Exit", ".status.exitCode", "integer"),
                _column("Attempt", ".status.attempt", "integer"),
                COST,
                AGE,
            ],
        ),
        "cronexecutions.yaml": _definition(
            kind="CronExecution",
            plural="cronexecutions",
            short_name="cex",
            spec=without_transition_rules(structural_schema(scheduling.CronExecutionSpec)),
            status=scheduling.CronExecutionStatus,
            columns=[
                _column("Schedule", ".spec.schedule"),
                _column("Time Zone", ".spec.timeZone"),
                _column("Suspend", ".spec.suspend", "boolean"),
                _column("Last Schedule", ".status.lastScheduleTime", "date"),
                _column("Last Success", ".status.lastSuccessfulTime", "date"),
                AGE,
            ],
            root=scheduling.ROOT_RULES,
        ),
        # R75: a queue has no status of its own: each Execution says its place in it.
        "executionqueues.yaml": _definition(
            kind="ExecutionQueue",
            plural="executionqueues",
            short_name="aeq",
            spec=structural_schema(scheduling.ExecutionQueueSpec),
            status=None,
            columns=[
                _column("Max Running", ".spec.maxRunning", "integer"),
                _column("Max Starts/Min", ".spec.maxStartsPerMinute", "integer"),
                AGE,
            ],
        ),
    }
