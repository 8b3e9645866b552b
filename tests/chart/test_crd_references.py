"""The walk that finds every reference-bearing field of a CRD's spec, which
tests/integration/test_admission_policy.py probes the chart's admission policy with.

Cases: the walk finds references wherever a schema may put them (nested objects, array items,
map values, anyOf alternatives, a volume's `secret`/`configMap`, a CSI volume's
`nodePublishSecretRef`, plain `*Name` strings) and does not look inside one it found; in
today's CRDs it finds the phase's, the defaults' and the grader's env and envFrom references,
`promptFrom`, `rubricFrom`, `imagePullSecrets`, `serviceAccountName`, `notify[].secretRef`
and `repositories[].credentialsSecret` (an Execution's and a Phase's);
a probe sets the field to the name it is given, makes what is missing on the way from its
required fields or a seed, keeps what the base has, and drops `x` when it sets `xFrom`.
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.chart import crd_references
from tests.chart.conftest import REPO


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


STRING = {"type": "string"}
NAMED = obj(name=STRING)


def crd(name: str) -> dict[str, Any]:
    return crd_references.spec_schema(yaml.safe_load((REPO / "crds" / f"{name}.yaml").read_text()))


def test_the_walk_finds_references_wherever_a_schema_puts_them() -> None:
    spec = obj(
        volumes=array(obj(
            name=STRING,
            secret=obj(secretName=STRING, items=array(obj(key=STRING))),
            projected=obj(sources=array(obj(configMap=NAMED, serviceAccountToken=obj()))),
            csi=obj(driver=STRING, nodePublishSecretRef=NAMED),
        )),
        sidecars={"type": "object", "additionalProperties": obj(envFrom=array(obj(
            secretRef=NAMED, prefix=STRING,
        )))},
        source={"anyOf": [obj(fromConfigMap=NAMED), obj(inline=STRING)]},
        runAs=obj(serviceAccountName=STRING, image=STRING),
    )  # fmt: skip
    found = {r.field: r.kind for r in crd_references.references(spec)}
    assert found == {
        "spec.volumes[].secret": "Secret",
        "spec.volumes[].projected.sources[].configMap": "ConfigMap",
        "spec.volumes[].projected.sources[].serviceAccountToken": "ServiceAccount",
        "spec.volumes[].csi.nodePublishSecretRef": "Secret",
        "spec.sidecars.*.envFrom[].secretRef": "Secret",
        "spec.source.fromConfigMap": "ConfigMap",
        "spec.runAs.serviceAccountName": "ServiceAccount",
    }


def test_todays_crds_have_these_references() -> None:
    settings = {
        "env[].valueFrom.secretKeyRef", "env[].valueFrom.configMapKeyRef",
        "envFrom[].secretRef", "envFrom[].configMapRef",
        "outcome.grader.env[].valueFrom.secretKeyRef",
        "outcome.grader.env[].valueFrom.configMapKeyRef",
        "outcome.grader.envFrom[].secretRef", "outcome.grader.envFrom[].configMapRef",
        "outcome.rubricFrom.configMapKeyRef", "imagePullSecrets", "serviceAccountName",
    }  # fmt: skip
    execution = {r.field for r in crd_references.references(crd("executions"))}
    assert execution == {
        *(f"spec.phases[].{f}" for f in settings | {"promptFrom.configMapKeyRef"}),
        *(f"spec.defaults.{f}" for f in settings),
        "spec.notify[].secretRef",
        "spec.repositories[].credentialsSecret",
    }
    phase = {r.field for r in crd_references.references(crd("phases"))}
    assert phase == {
        *(f"spec.{f}" for f in settings | {"promptFrom.configMapKeyRef"}),
        "spec.repositories[].credentialsSecret",
    }


BASE = {
    "kind": "Execution",
    "spec": {"defaults": {"image": "busybox"}, "phases": [{"name": "draft", "prompt": "Write."}]},
}


def by_field(field: str) -> crd_references.Reference:
    (found,) = [r for r in crd_references.references(crd("executions")) if r.field == field]
    return found


def test_a_probe_makes_what_is_missing_and_keeps_what_is_there() -> None:
    grader = by_field("spec.defaults.outcome.grader.envFrom[].secretRef")
    assert grader.at == "spec.defaults.outcome.grader.envFrom[0].secretRef"
    assert crd_references.probe(BASE, crd("executions"), grader, "key")["spec"]["defaults"] == {
        "image": "busybox",
        "outcome": {"rubric": "Graded.", "grader": {"image": "busybox",
                                                    "envFrom": [{"secretRef": {"name": "key"}}]}},
    }  # fmt: skip
    env = by_field("spec.phases[].env[].valueFrom.secretKeyRef")
    phase = crd_references.probe(BASE, crd("executions"), env, "key")["spec"]["phases"]
    assert phase == [{"name": "draft", "prompt": "Write.", "env": [
        {"name": "probe", "valueFrom": {"secretKeyRef": {"name": "key", "key": "probe"}}}
    ]}]  # fmt: skip
    pulling = by_field("spec.phases[].imagePullSecrets")
    pulled = crd_references.probe(BASE, crd("executions"), pulling, "regcred")["spec"]["phases"]
    assert pulled[0]["imagePullSecrets"] == [{"name": "regcred"}]
    account = by_field("spec.defaults.serviceAccountName")
    run_as = crd_references.probe(BASE, crd("executions"), account, "robot")["spec"]["defaults"]
    assert run_as["serviceAccountName"] == "robot"
    assert BASE["spec"]["defaults"] == {"image": "busybox"}  # the base is left alone


def test_a_probe_setting_x_from_drops_x() -> None:
    prompt = by_field("spec.phases[].promptFrom.configMapKeyRef")
    phase = crd_references.probe(BASE, crd("executions"), prompt, "prompts")["spec"]["phases"][0]
    assert phase == {
        "name": "draft",
        "promptFrom": {"configMapKeyRef": {"name": "prompts", "key": "probe"}},
    }
    rubric = by_field("spec.phases[].outcome.rubricFrom.configMapKeyRef")
    outcome = crd_references.probe(BASE, crd("executions"), rubric, "rubrics")["spec"]["phases"][0]
    assert outcome["outcome"] == {
        "grader": {"image": "busybox"},
        "rubricFrom": {"configMapKeyRef": {"name": "rubrics", "key": "probe"}},
    }
