"""The CRDs are chart templates, so `helm upgrade` upgrades them; the chart needs Kubernetes 1.29.

Cases: by default both CRDs render, each exactly the repository's crds/ file plus the
release's labels and `helm.sh/resource-policy: keep`; `crds.keep=false` drops the
annotation, `crds.install=false` the CRDs; the chart has no crds/ folder (Helm never
upgrades what is there); a Kubernetes older than 1.29 is refused, 1.29 itself (a
pre-release build included) is not. (tests/integration/test_chart_upgrade.py upgrades a
release on the local cluster.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.chart.conftest import CHART, REPO, Render, run_helm

KEEP = {"helm.sh/resource-policy": "keep"}


def rendered_crds(render: Render, values: dict[str, str] | None = None) -> dict[str, Any]:
    objects = render(values or {})
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "CustomResourceDefinition"}


def test_each_crd_renders_as_generated_labelled_and_kept(render: Render) -> None:
    crds = rendered_crds(render)
    ours = [yaml.safe_load(p.read_text()) for p in sorted((REPO / "crds").glob("*.yaml"))]
    assert set(crds) == {
        f"{plural}.agentjobs.io"
        for plural in ("executions", "phases", "cronexecutions", "executionqueues")
    }
    for crd in ours:
        chart = crds[crd["metadata"]["name"]]
        assert chart["spec"] == crd["spec"]
        assert chart["metadata"]["annotations"] == KEEP
        assert chart["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"


def test_crds_keep_false_lets_uninstall_delete_them(render: Render) -> None:
    crds = rendered_crds(render, {"crds.keep": "false"})
    assert len(crds) == 4
    assert all("annotations" not in crd["metadata"] for crd in crds.values())


def test_crds_install_false_leaves_them_out(render: Render) -> None:
    assert rendered_crds(render, {"crds.install": "false"}) == {}


def test_the_chart_has_no_crds_folder() -> None:
    assert not (CHART / "crds").exists()


def test_kubernetes_older_than_1_29_is_refused(helm: Path) -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["kubeVersion"] == ">=1.29.0-0"
    for version, accepted in (("1.28.15", False), ("1.29.0-rc.1", True), ("1.29.0", True)):
        result = run_helm(helm, "template", "agentjobs", str(CHART), "--kube-version", version)
        assert (result.returncode == 0) == accepted, (version, result.stderr)
        if not accepted:
            assert "requires kubeVersion: >=1.29.0-0" in result.stderr
