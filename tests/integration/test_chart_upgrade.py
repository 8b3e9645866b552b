"""`helm upgrade` from the last release's chart, whose CRDs sat in its crds/ folder, to this one.

The last release is commit cb67a20, where the session that made the CRDs chart templates
started: the chart users had installed then (its crds/ installed once by Helm, never
upgraded). Both charts' CRDs are installed under a test group (upgrade.agentjobs.io) so
that the shared cluster's CRDs, which running operators rely on, are never touched; the
schemas are the charts' own. Cases, in order on one release with no operator replica: an
Execution with a status written under the old CRDs; a field the old schema lacks
(status.resumedFrom) is pruned; `helm upgrade` refuses to take over CRDs it did not create
until they are labelled and annotated for the release (as the chart's README says); then
it upgrades them (and adds the two CRDs the release lacked), the Execution and its status
are intact, the new field is kept, every CRD carries `helm.sh/resource-policy: keep`, and
`helm uninstall` leaves them and the Execution in place.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from devcluster.testing import DevCluster, Kubectl
from tests.integration.operator_fixtures import REPO

LAST_RELEASE = "cb67a2015c49292392b376a87e221745a4fbd32c"
GROUP = "upgrade.agentjobs.io"
RELEASED_CRDS = (f"executions.{GROUP}", f"phases.{GROUP}")
# The last release had two; this chart adds these, which the upgrade creates.
CRDS = (*RELEASED_CRDS, f"cronexecutions.{GROUP}", f"executionqueues.{GROUP}")
STATUS = {
    "status": "completed",
    "observedGeneration": 1,
    "deliverableProduced": True,
    "phases": [{"name": "write", "status": "completed", "deliverableRecovered": False}],
    "conditions": [
        {
            "type": "Complete",
            "status": "True",
            "reason": "Completed",
            "message": "notes written",
            "lastTransitionTime": "2026-12-01T12:00:00Z",
            "observedGeneration": 1,
        }
    ],
}
RESUMED_FROM = {"name": "parent", "uid": "0b5e6c1e-0000-4000-8000-000000000001"}


def chart_at(commit: str, destination: Path) -> Path:
    """The chart as it was at `commit`, from git."""
    archive = subprocess.run(
        ["git", "archive", commit, "charts/agentjobs"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")
    return destination / "charts" / "agentjobs"


def released(commit: str, path: str) -> str:
    """A file as it was at `commit`, from git."""
    shown = subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return shown.stdout


def move_to_test_group(crd_files: list[Path], count: int) -> None:
    assert len(crd_files) == count, crd_files
    for path in crd_files:
        text = path.read_text()
        path.write_text(text.replace("agentjobs.io", GROUP))


def helm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["helm", *args], env=env, capture_output=True, text=True, check=False, timeout=120
    )


def execution_status(kubectl: Kubectl, namespace: str) -> Any:
    return kubectl.json("get", "-n", namespace, f"executions.{GROUP}", "success").get("status")


def patch_status(kubectl: Kubectl, namespace: str, status: dict[str, Any]) -> None:
    kubectl.run(
        "patch", "-n", namespace, f"executions.{GROUP}", "success", "--subresource=status",
        "--type=merge", "-p", json.dumps({"status": status}),
    )  # fmt: skip


def delete_test_crds(kubectl: Kubectl, *, wait: bool) -> None:
    """The test group's CRDs deleted. The API server removes a CRD once its finalizer has
    listed the CRD's objects, and that list fails while the CRD's storage (re)initializes, as
    it does after the upgrade changed it; each failure is retried later than the last, so the
    removal can take minutes ("could not list instances: storage is (re)initializing")."""
    kubectl.run(
        "delete", "crd", *CRDS, "--ignore-not-found", f"--wait={str(wait).lower()}",
        "--timeout=300s", timeout=330,
    )  # fmt: skip


def test_helm_upgrade_from_the_last_release_keeps_executions_and_their_status(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    old = chart_at(LAST_RELEASE, tmp_path / "old")
    assert not (old / "templates" / "crds").exists()
    move_to_test_group(sorted((old / "crds").glob("*.yaml")), len(RELEASED_CRDS))
    new = tmp_path / "new"
    shutil.copytree(REPO / "charts" / "agentjobs", new)
    move_to_test_group(sorted((new / "templates" / "crds").glob("*.yaml")), len(CRDS))
    env = local_cluster.env
    release = f"up-{namespace[-6:]}"
    values = ["--namespace", namespace, "--set", "replicaCount=0", "--wait", "--timeout=90s"]
    delete_test_crds(kubectl, wait=True)  # a run before this one may have left them
    try:
        installed = helm(env, "install", release, str(old), *values)
        assert installed.returncode == 0, installed.stderr
        for crd in RELEASED_CRDS:
            kubectl.run("wait", "--for=condition=Established", f"crd/{crd}", "--timeout=30s")
        # An Execution as users of the last release wrote it: only the fields it knew.
        manifest = released(LAST_RELEASE, "tests/integration/manifests/success.yaml").replace(
            "agentjobs.io/", f"{GROUP}/"
        )
        kubectl.run("apply", "-n", namespace, "-f", "-", input=manifest)
        patch_status(kubectl, namespace, {**STATUS, "resumedFrom": RESUMED_FROM})
        assert execution_status(kubectl, namespace) == STATUS  # resumedFrom pruned

        refused = helm(env, "upgrade", release, str(new), *values)
        assert refused.returncode != 0
        assert "invalid ownership metadata" in refused.stderr, refused.stderr
        for crd in RELEASED_CRDS:
            kubectl.run("label", "crd", crd, "app.kubernetes.io/managed-by=Helm")
            kubectl.run(
                "annotate", "crd", crd, f"meta.helm.sh/release-name={release}",
                f"meta.helm.sh/release-namespace={namespace}",
            )  # fmt: skip
        upgraded = helm(env, "upgrade", release, str(new), *values)
        assert upgraded.returncode == 0, upgraded.stderr

        assert execution_status(kubectl, namespace) == STATUS
        patch_status(kubectl, namespace, {"resumedFrom": RESUMED_FROM})
        assert execution_status(kubectl, namespace) == {**STATUS, "resumedFrom": RESUMED_FROM}
        for crd in CRDS:
            metadata = kubectl.json("get", "crd", crd)["metadata"]
            assert metadata["annotations"]["helm.sh/resource-policy"] == "keep"

        uninstalled = helm(env, "uninstall", release, "--namespace", namespace, "--wait")
        assert uninstalled.returncode == 0, uninstalled.stderr
        assert "kept due to the resource policy" in uninstalled.stdout + uninstalled.stderr
        assert execution_status(kubectl, namespace)["resumedFrom"] == RESUMED_FROM
    finally:
        helm(env, "uninstall", release, "--namespace", namespace, "--ignore-not-found")
        kubectl.run("delete", "-n", namespace, f"executions.{GROUP}", "--all", check=False)
        delete_test_crds(kubectl, wait=False)  # nothing else uses their group
