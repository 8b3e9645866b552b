"""Every field of a CRD's spec that refers to a Secret, a ConfigMap or a ServiceAccount, found by
walking the CRD's schema, and a manifest that uses one such field, to probe the admission policy.

The rule: Kubernetes names each field that refers to one of these kinds after the kind
(`secretKeyRef`, `configMapRef`, `imagePullSecrets`, a volume's `secret` and `configMap`, a CSI
volume's `nodePublishSecretRef`, `serviceAccountName`), so a property whose name contains
`secret`, `configmap` or `serviceaccount`, in any case, is a reference, and the walk does not
look inside it. The walk goes through properties, array items, map values
(`additionalProperties`) and `anyOf`/`allOf`/`oneOf`, so a field added anywhere under `spec`,
at any depth, is found.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ITEM = "[]"
MAP_VALUE = "*"
# The word in a property's name, and the kind its reference names.
KINDS = (("serviceaccount", "ServiceAccount"), ("configmap", "ConfigMap"), ("secret", "Secret"))
# Values for objects whose required fields alone do not satisfy the CRD's CEL rules.
SEEDS: dict[str, Any] = {
    "outcome": {"rubric": "Graded.", "grader": {"image": "busybox"}},
    "url": "https://git.example.com/team/service.git",
}


@dataclass(frozen=True)
class Reference:
    """A reference-bearing field: its path under the object, the kind it names, its schema."""

    path: tuple[str, ...]
    kind: str
    schema: dict[str, Any] = field(compare=False)

    @property
    def field(self) -> str:
        """E.g. ``spec.phases[].env[].valueFrom.secretKeyRef``."""
        return _joined(self.path)

    @property
    def at(self) -> str:
        """The field as a probe sets it, e.g. ``spec.phases[0].env[0].valueFrom.secretKeyRef``."""
        return _joined(tuple("[0]" if p == ITEM else p for p in self.path))


def _joined(path: tuple[str, ...]) -> str:
    return "".join(p if p.startswith("[") else f".{p}" for p in path).lstrip(".")


def spec_schema(crd: dict[str, Any]) -> dict[str, Any]:
    """The ``spec`` schema of the CRD's only version."""
    (version,) = crd["spec"]["versions"]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schema


def references(spec: dict[str, Any]) -> list[Reference]:
    """Every reference-bearing field of a ``spec`` schema, in the schema's order."""
    return list(_walk(spec, ("spec",)))


def _walk(schema: dict[str, Any], path: tuple[str, ...]) -> Iterator[Reference]:
    for name, child in (schema.get("properties") or {}).items():
        kind = next((k for word, k in KINDS if word in name.lower()), None)
        if kind is not None:
            yield Reference((*path, name), kind, child)
        else:
            yield from _walk(child, (*path, name))
    if "items" in schema:
        yield from _walk(schema["items"], (*path, ITEM))
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _walk(schema["additionalProperties"], (*path, MAP_VALUE))
    for combinator in ("anyOf", "allOf", "oneOf"):
        for alternative in schema.get(combinator, []):
            yield from _walk(alternative, path)


def probe(
    base: dict[str, Any], spec: dict[str, Any], reference: Reference, name: str
) -> dict[str, Any]:
    """``base`` (a valid object) with ``reference`` set to name ``name``.

    Missing objects on the way are made of their required fields (or a seed); setting a field
    ``xFrom`` removes ``x``, as Kubernetes pairs them (``value``/``valueFrom``).
    """
    manifest = copy.deepcopy(base)
    parent: Any = manifest
    schema = {"properties": {"spec": spec}}
    *way, last = reference.path
    for step in way:
        schema = _child(schema, step)
        parent = _descend(parent, step, schema)
    _unpair(parent, last)
    parent[last] = _naming(reference.schema, name)
    return manifest


def _unpair(parent: dict[str, Any], key: str) -> None:
    if key.endswith("From"):
        parent.pop(key.removesuffix("From"), None)


def _child(schema: dict[str, Any], step: str) -> dict[str, Any]:
    if step == ITEM:
        child: dict[str, Any] = schema["items"]
    elif step == MAP_VALUE:
        child = schema["additionalProperties"]
    else:
        child = schema["properties"][step]
    return child


def _descend(parent: Any, step: str, schema: dict[str, Any]) -> Any:
    if step == ITEM:
        if not parent:
            parent.append(minimal(schema))
        return parent[0]
    key = "probe" if step == MAP_VALUE else step
    if key not in parent:
        _unpair(parent, key)
        parent[key] = copy.deepcopy(SEEDS[key]) if key in SEEDS else minimal(schema)
    return parent[key]


def minimal(schema: dict[str, Any]) -> Any:
    """The least value the schema accepts: required fields only, each at its least."""
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            field: copy.deepcopy(SEEDS[field]) if field in SEEDS else minimal(properties[field])
            for field in schema.get("required", [])
        }
    if kind == "array":
        return [minimal(schema["items"]) for _ in range(schema.get("minItems", 0))]
    if kind == "integer":
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return schema.get("enum", ["probe"])[0]


def _naming(schema: dict[str, Any], name: str) -> Any:
    """A value of ``schema`` that names ``name``: the string itself, or an object whose `name`
    (or `...Name`, as a volume's `secretName`) it is."""
    kind = schema.get("type")
    if kind == "array":
        return [_naming(schema["items"], name)]
    if kind != "object":
        return name
    value = minimal(schema)
    (field,) = [f for f in schema.get("properties", {}) if f == "name" or f.endswith("Name")]
    value[field] = name
    return value
