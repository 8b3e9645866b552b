"""The chart's metrics: the port, the opt-in ServiceMonitor and PrometheusRule, the dashboard.

Every metric the Grafana dashboard and the alerts use is one the operator
exports (its registry says so, with the series name each kind of metric
takes), so a renamed metric fails here rather than on a blank panel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prometheus_client.metrics_core import Metric

from agentjobs.adapters import metrics
from tests.chart.conftest import CHART, Render

DASHBOARD = CHART / "dashboards" / "agentjobs.json"
NAME = re.compile(r"\b((?:agentjobs|process)_[a-z_]+)\b")
SERIES_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
                   "gauge": ("",)}  # fmt: skip


def exported() -> dict[str, set[str]]:
    """Each series name the operator exports, with the label names it carries."""
    names: dict[str, set[str]] = {}
    families: list[Metric] = list(metrics.REGISTRY.collect())
    for family in families:
        for suffix in SERIES_SUFFIXES.get(family.type, ("",)):
            names[family.name + suffix] = set()
    for collector in metrics.REGISTRY._collector_to_names:  # the declared label names
        labels = getattr(collector, "_labelnames", ())
        for name in metrics.REGISTRY._collector_to_names[collector]:
            names.setdefault(name, set()).update(labels)
    return names


def expressions(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [
            e for k, v in value.items() for e in ([v] if k in ("expr", "query") else expressions(v))
        ]
    if isinstance(value, list):
        return [e for item in value for e in expressions(item)]
    return []


def used(expression: str) -> set[str]:
    return set(NAME.findall(expression))


def test_every_metric_the_dashboard_uses_is_exported_with_its_labels() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    known = exported()
    found = [e for e in expressions(dashboard) if isinstance(e, str)]
    assert len(found) >= 10
    for expression in found:
        for name in used(expression):
            assert name in known, f"{name} in {expression!r} is not exported"
        for grouped in re.findall(r"by \(([^)]*)\)", expression):
            labels = {label.strip() for label in grouped.split(",")} - {"le"}
            series = [n for n in used(expression) if n.startswith("agentjobs_")]
            assert any(labels <= known[n] for n in series), (expression, labels)
    covered = {n for e in found for n in used(e)}
    ours = {family.name + SERIES_SUFFIXES[family.type][0] for family in metrics.REGISTRY.collect()
            if family.name.startswith("agentjobs_")}  # fmt: skip
    assert ours <= covered, f"not on the dashboard: {sorted(ours - covered)}"


def test_the_metrics_port_is_on_the_pods_and_the_service_and_off_when_disabled(
    render: Render,
) -> None:
    objects = render()
    service = next(o for o in objects if o["kind"] == "Service")
    assert {"name": "metrics", "port": 9090, "targetPort": "metrics", "protocol": "TCP"} in (
        service["spec"]["ports"]
    )
    container = next(o for o in objects if o["kind"] == "Deployment")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert "--metrics-port=9090" in container["args"]
    assert {"name": "metrics", "containerPort": 9090} in container["ports"]
    assert not {o["kind"] for o in objects} & {"ServiceMonitor", "PrometheusRule"}
    off = render({"metrics.enabled": "false"})
    deployment = next(o for o in off if o["kind"] == "Deployment")
    assert not any(a.startswith("--metrics-port") for a in
                   deployment["spec"]["template"]["spec"]["containers"][0]["args"])  # fmt: skip


def test_the_service_monitor_scrapes_the_services_metrics_port(render: Render) -> None:
    objects = render({"metrics.serviceMonitor.enabled": "true"})
    monitor = next(o for o in objects if o["kind"] == "ServiceMonitor")
    service = next(o for o in objects if o["kind"] == "Service")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["endpoints"] == [
        {"port": "metrics", "path": "/metrics", "interval": "30s"}
    ]
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()


def test_the_alerts_use_exported_metrics(render: Render) -> None:
    objects = render({"metrics.prometheusRule.enabled": "true"})
    rule = next(o for o in objects if o["kind"] == "PrometheusRule")
    alerts = {r["alert"]: r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]}
    assert set(alerts) == {"AgentjobsPhasesStuck", "AgentjobsWebhookDeliveriesFailed",
                           "AgentjobsReconcileErrors"}  # fmt: skip
    known = exported()
    for expression in alerts.values():
        assert used(expression) and used(expression) <= set(known), expression


def test_the_dashboard_is_valid_grafana_json() -> None:
    dashboard = json.loads(Path(DASHBOARD).read_text())
    assert dashboard["uid"] == "agentjobs"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        assert panel["targets"] and panel["datasource"]["uid"] == "${datasource}"
