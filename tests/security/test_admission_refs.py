"""The chart's admission policy, as the security suite's tenant meets it: a Secret the tenant may
not get reaches no pod through a grader.

The policy is bound to the tenant's namespace; the tenant (its own token, allowed only to run
Executions) creates them in server-side dry runs. Cases: a Secret in the grader's `env` of a
phase's outcome, and in the grader's `envFrom` of the defaults' outcome, is refused naming the
field and the Secret; once the tenant may get that Secret, the same Execution is admitted.
(tests/integration/test_admission_policy.py probes every other reference the CRDs allow.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from devcluster.testing import DevCluster, Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import wait_for
from tests.integration.test_admission_policy import rendered_policy, secret_env
from tests.security.conftest import TENANT_ACCOUNT, Tenant

pytestmark = pytest.mark.integration


@pytest.fixture
def policy(local_cluster: DevCluster, kubectl: Kubectl, tenant: Tenant) -> Iterator[None]:
    rendered = rendered_policy(local_cluster, f"refs-{tenant.namespace[-6:]}", tenant.namespace)
    kubectl.run("apply", "-f", "-", input=rendered)
    yield
    kubectl.run("delete", "-f", "-", "--wait=false", input=rendered)


def graded_execution(where: str, grader: dict[str, Any]) -> dict[str, Any]:
    outcome = {"outcome": {"rubric": "Graded.", "grader": {"image": BUSYBOX, **grader}}}
    phase = {"name": "draft", "prompt": "Write it.", **(outcome if where == "phase" else {})}
    defaults = {"image": BUSYBOX, **(outcome if where == "defaults" else {})}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "graded"},
        "spec": {"defaults": defaults, "phases": [phase]},
    }


def dry_run(tenant: Tenant, manifest: dict[str, Any]) -> str:
    """The refusal's text, or "" when admitted."""
    result = tenant.kubectl.run(
        "create", "--dry-run=server", "-o", "name", "-n", tenant.namespace, "-f", "-",
        input=json.dumps(manifest), check=False,
    )  # fmt: skip
    return result.stderr if result.returncode else ""


@pytest.mark.parametrize(
    ("where", "grader", "field"),
    [("phase", {"env": [secret_env("grader-key")]},
      "spec.phases[0].outcome.grader.env[0].valueFrom.secretKeyRef (phase draft)"),
     ("defaults", {"envFrom": [{"secretRef": {"name": "grader-key"}}]},
      "spec.defaults.outcome.grader.envFrom[0].secretRef")],
)  # fmt: skip
def test_a_secret_the_tenant_may_not_get_reaches_no_grader(
    kubectl: Kubectl, tenant: Tenant, policy: None, where: str, grader: dict[str, Any], field: str
) -> None:
    manifest = graded_execution(where, grader)
    refusal = f"a pod given Secret grader-key (asked for by {field}) takes permission to get it"
    wait_for(lambda: refusal in dry_run(tenant, manifest), timeout=10, what="the refusal")

    kubectl.run("create", "role", "grader-key", "-n", tenant.namespace, "--verb=get",
                "--resource=secrets", "--resource-name=grader-key")  # fmt: skip
    account = f"--serviceaccount={tenant.namespace}:{TENANT_ACCOUNT}"
    kubectl.run("create", "rolebinding", "grader-key", "-n", tenant.namespace,
                "--role=grader-key", account)  # fmt: skip
    wait_for(lambda: dry_run(tenant, manifest) == "", timeout=10, what="the tenant admitted")
