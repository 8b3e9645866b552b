"""What the security suite's tenant may do by itself, so that any reach a later test shows
came through the operator:

- it may create and read Executions in its namespace;
- it may not read Secrets, ConfigMaps, pods or logs there, nor anything in the victim's;
- `leaks` finds the victim's value where it is (in the victim's own namespace) and not
  in a namespace that never held it.
"""

from __future__ import annotations

import pytest

from devcluster.testing import Kubectl
from tests.security.conftest import Tenant, Victim, leaks

pytestmark = pytest.mark.integration


def can(tenant: Tenant, verb: str, resource: str, namespace: str) -> bool:
    answer = tenant.kubectl.run("auth", "can-i", verb, resource, "-n", namespace, check=False)
    return answer.stdout.strip() == "yes"


def test_the_tenant_may_run_executions_and_read_nothing_else(
    tenant: Tenant, victim: Victim
) -> None:
    assert can(tenant, "create", "executions.agentjobs.io", tenant.namespace)
    assert can(tenant, "get", "phases.agentjobs.io", tenant.namespace)
    for resource in ("secrets", "configmaps", "pods", "pods/log", "phases.agentjobs.io"):
        assert not can(tenant, "create" if "phases" in resource else "get", resource,
                       tenant.namespace), resource  # fmt: skip
    for resource in ("secrets", "configmaps", "executions.agentjobs.io"):
        assert not can(tenant, "get", resource, victim.namespace), resource


def test_leaks_finds_the_value_where_it_is_and_only_there(
    kubectl: Kubectl, tenant: Tenant, victim: Victim
) -> None:
    assert sorted(leaks(kubectl, victim.namespace, victim.value)) == [
        "ConfigMap/canary",
        "Secret/canary",
    ]
    assert leaks(kubectl, tenant.namespace, victim.value) == []
