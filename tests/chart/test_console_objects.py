"""The chart's console (R72), rendered: off by default; on, its own Deployment, Service,
ServiceAccount and read-only RBAC.

Cases: nothing rendered by default; on, every object is valid Kubernetes and lint is clean;
the console runs `agentjobs console --user-tokens` on the configured port with the
operator's storage settings; its pods and the operator's never select each other; its
ClusterRole only reads and asks reviews; the aggregated `edit` role may download artifacts
and `view` may not; the schema refuses an unknown console value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate

from tests.chart.conftest import CHART, Render, run_helm

ON = {
    "console.enabled": "true",
    "console.port": "9090",
    "s3.endpoint": "http://s3:9000",
    "s3.accessKey": "a",
    "s3.secretKey": "b",
}
CONSOLE_KINDS = {"Deployment", "Service", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"}


def console_objects(render: Render, values: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        o["kind"]: o
        for o in render(values)
        if o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "console"
    }


def test_off_by_default(render: Render) -> None:
    assert console_objects(render, {}) == {}


def test_on_it_is_valid_kubernetes_and_lints_clean(render: Render, helm: Path) -> None:
    objects = console_objects(render, ON)
    assert set(objects) == CONSOLE_KINDS
    for obj in objects.values():
        kubernetes_validate.validate(obj, "1.35.0", strict=True)
    result = run_helm(helm, "lint", "--strict", str(CHART), "--set", "console.enabled=true")
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_runs_with_user_tokens_and_the_operators_storage(render: Render) -> None:
    deployment = console_objects(render, ON)["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"] == ["console", "--user-tokens", "--listen=0.0.0.0:9090"]
    env = {e["name"]: e for e in container["env"]}
    assert env["AGENTJOBS_S3_ENDPOINT"]["value"] == "http://s3:9000"
    assert env["AGENTJOBS_S3_SECRET_KEY"]["valueFrom"]["secretKeyRef"]["key"] == "secretKey"
    assert container["ports"] == [{"name": "http", "containerPort": 9090}]


def test_its_pods_and_the_operators_never_select_each_other(render: Render) -> None:
    objects = render(ON)
    services = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Service"}
    pods = {
        o["metadata"]["name"]: o["spec"]["template"]["metadata"]["labels"]
        for o in objects
        if o["kind"] == "Deployment"
    }
    for service in services.values():
        selector = service["spec"]["selector"].items()
        chosen = [name for name, labels in pods.items() if selector <= labels.items()]
        assert len(chosen) == 1, (service["metadata"]["name"], chosen)


def test_its_cluster_role_only_reads_and_asks_reviews(render: Render) -> None:
    rules = console_objects(render, ON)["ClusterRole"]["rules"]
    for rule in rules:
        if rule["apiGroups"] in (["authentication.k8s.io"], ["authorization.k8s.io"]):
            assert rule["verbs"] == ["create"]
        else:
            assert set(rule["verbs"]) <= {"get", "list", "watch"}
    assert {"secrets", "pods"}.isdisjoint(r for rule in rules for r in rule["resources"])


def test_edit_may_download_artifacts_and_view_may_not(render: Render) -> None:
    roles = {o["metadata"]["name"]: o for o in render({}) if o["kind"] == "ClusterRole"}
    granted = {
        name: {r for rule in role["rules"] for r in rule["resources"]}
        for name, role in roles.items()
    }
    assert "executions/artifacts" in granted["agentjobs-edit"]
    assert "executions/artifacts" not in granted["agentjobs-view"]


def test_the_schema_refuses_an_unknown_console_value(helm: Path) -> None:
    result = run_helm(helm, "template", str(CHART), "--set", "console.colour=blue")
    assert result.returncode != 0 and "colour" in result.stderr
