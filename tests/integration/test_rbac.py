"""The chart's RBAC is the least privilege the operator needs, proven on the real API server.

The chart is rendered for one namespace (its ServiceAccount, and a Role and
RoleBinding there; with two replicas also the leader-election Role and
RoleBinding, the release being in that namespace too), applied to the local
control plane (authorization Node,RBAC), and `agentjobs run --namespace NS`
(with two replicas, `--leader-election agentjobs`) runs with a token of that
ServiceAccount from `kubectl create token`, never with an admin credential.
Five scenarios between them use every permission: `complete` (two phases, the
first with its prompt from a ConfigMap), `cancel` (a running phase is
cancelled), `ttl` (a finished Execution deleted by its TTL), `cron` (a
CronExecution's run, on a clock sixty times as fast) and `queue` (an Execution
admitted by its ExecutionQueue). Their
artifacts go through the operator's credentials endpoint: the sidecars hold
only a per-attempt token, in a Secret the operator creates and deletes but
never reads, and the endpoint checks each token's Phase with the operator's own
`get` on Phases. Cases:

- the rendered Roles grant exactly the permissions listed in PERMISSIONS (and, with
  two replicas, LEASE_PERMISSIONS, on the chart's Lease only but for create): no get,
  list or watch of Secrets; with `webhooks.enabled` one more, `get` on the Secret
  `agentjobs-webhooks` alone, and the API server's authorizer agrees for both settings;
- with the whole Role, the two-phase Execution completes and the running one is cancelled;
- without any one permission (one verb on one resource), the operator logs the API
  server's refusal, and the Execution does not reach its end (except where kopf copes:
  it re-lists when a watch is refused, and gives up on an event after retrying it).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.operator_account import LEASE, account_name, render_rbac, token_kubeconfig
from devcluster.testing import DevCluster, Kubectl
from tests.integration.operator_fixtures import (
    OperatorProcess,
    wait_for,
)

# Longer than either scenario takes with every permission (about 5 s here).
RUN_SECONDS = 8
SCENARIOS = Path(__file__).resolve().parent / "manifests" / "rbac"
WEBHOOKS_SECRET = "agentjobs-webhooks"  # the chart's default webhooks.secretName


@dataclass(frozen=True)
class Permission:
    """One verb on one resource, and the scenario that shows the operator needs it."""

    group: str
    resource: str
    verb: str
    # None: granted for a race no scenario can be made to lose (see its comment).
    scenario: str | None = "complete"
    # False where the run may still go on: only the logged refusal is asserted.
    blocks: bool = True

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.group, self.resource, self.verb)

    def __str__(self) -> str:
        group = self.group or "core"
        return f"{self.verb} {group}/{self.resource}"


PERMISSIONS = [
    # A CronExecution's run of that name exists: whose it is (a race no scenario can lose).
    Permission("agentjobs.io", "executions", "get", scenario=None),
    Permission("agentjobs.io", "executions", "create", scenario="cron"),
    Permission("agentjobs.io", "executions", "list"),
    # kopf re-lists while it retries the refused watch, so Executions still move, late.
    Permission("agentjobs.io", "executions", "watch", blocks=False),
    Permission("agentjobs.io", "executions", "patch"),
    Permission("agentjobs.io", "executions", "delete", scenario="ttl"),
    Permission("agentjobs.io", "executions/status", "patch"),
    Permission("agentjobs.io", "executionqueues", "list", scenario="queue"),
    Permission("agentjobs.io", "executionqueues", "watch", scenario="queue", blocks=False),
    Permission("agentjobs.io", "cronexecutions", "list", scenario="cron"),
    Permission("agentjobs.io", "cronexecutions", "watch", scenario="cron", blocks=False),
    Permission("agentjobs.io", "cronexecutions/status", "patch", scenario="cron"),
    Permission("agentjobs.io", "phases", "get"),
    Permission("agentjobs.io", "phases", "list"),
    Permission("agentjobs.io", "phases", "watch"),
    Permission("agentjobs.io", "phases", "create"),
    Permission("agentjobs.io", "phases", "patch", scenario="cancel"),
    Permission("agentjobs.io", "phases/status", "patch"),
    # A runner reads its pod from the pod watch; it gets the pod only when the watch does not
    # show it yet (just created), so that a lagging watch is never taken for a vanished pod.
    Permission("", "pods", "get", scenario=None),
    # Refused, kopf keeps retrying its pod listing (the runner's copy of its pod comes from
    # that watch); the refusal is logged.
    Permission("", "pods", "list", blocks=False),
    Permission("", "pods", "watch", blocks=False),
    Permission("", "pods", "create"),
    Permission("", "pods", "delete", scenario="cancel"),
    # Refused, the runner cannot release its pod once the run is recorded, so never finishes.
    Permission("", "pods", "patch"),
    Permission("", "pods/log", "get"),
    Permission("", "configmaps", "get"),
    Permission("", "configmaps", "create"),
    # Each attempt's token for the credentials endpoint; never read back (no get or list).
    Permission("", "secrets", "create"),
    # Refused, the attempt's token Secret stays until its Phase goes (owner reference).
    Permission("", "secrets", "delete", blocks=False),
    # kopf retries each refused event for about a minute before it gives up on it.
    Permission("", "events", "create", blocks=False),
]
# With more than one replica (`--leader-election`), the replicas elect their leader by a Lease.
LEASE_PERMISSIONS = [
    # Refused, no replica can start the election, so none ever leads.
    Permission("coordination.k8s.io", "leases", "create"),
    Permission("coordination.k8s.io", "leases", "get"),
    # Refused, the replica that created the Lease leads until its first renew deadline (10 s),
    # then stops: the run may end first.
    Permission("coordination.k8s.io", "leases", "update", blocks=False),
]


def triples(*roles: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (group, resource, verb)
        for role in roles
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    ]


def without(roles: list[dict[str, Any]], permission: Permission) -> list[dict[str, Any]]:
    """The Roles with one verb on one resource taken away, and everything else kept."""
    reduced = [_without(role, permission) for role in roles]
    assert permission.triple not in triples(*reduced)
    return reduced


def _without(role: dict[str, Any], permission: Permission) -> dict[str, Any]:
    reduced = copy.deepcopy(role)
    rules = []
    for rule in reduced["rules"]:
        if (
            permission.group not in rule["apiGroups"]
            or permission.resource not in rule["resources"]
        ):
            rules.append(rule)
            continue
        others = [r for r in rule["resources"] if r != permission.resource]
        if others:
            rules.append({**rule, "resources": others})
        verbs = [v for v in rule["verbs"] if v != permission.verb]
        if verbs:
            rules.append({**rule, "resources": [permission.resource], "verbs": verbs})
    reduced["rules"] = rules
    return reduced


@dataclass
class Installed:
    """The operator's RBAC objects in a namespace, and a way to run the operator with them."""

    namespace: str
    roles: list[dict[str, Any]]
    start: Callable[[list[dict[str, Any]]], OperatorProcess]


@pytest.fixture
def replicas() -> int:
    """How many replicas the chart is rendered for; 2 runs the operator with
    --leader-election."""
    return 1


@pytest.fixture
def installed(
    local_cluster: DevCluster,
    kubectl: Kubectl,
    crds: None,
    namespace: str,
    tmp_path: Path,
    replicas: int,
) -> Iterator[Installed]:
    objects = render_rbac(local_cluster.env, namespace, replicas)
    roles = [o for o in objects if o["kind"] == "Role"]
    for obj in objects:
        if obj["kind"] != "Role":
            kubectl.apply(obj, namespace)
    account = account_name(objects)
    kubeconfig = token_kubeconfig(
        local_cluster.env, namespace, account, tmp_path / "operator.kubeconfig"
    )
    started: list[OperatorProcess] = []

    def start(granted: list[dict[str, Any]]) -> OperatorProcess:
        for role in granted:
            kubectl.apply(role, namespace)
        env = {**local_cluster.env, "KUBECONFIG": str(kubeconfig)}
        election = ["--leader-election", LEASE] if replicas > 1 else []
        clock = ["--cron-clock-speed", "60"]  # the cron scenario's minute passes in a second
        process = OperatorProcess(env, namespace, tmp_path / "operator.log", [*election, *clock])
        process.start()
        started.append(process)
        return process

    yield Installed(namespace=namespace, roles=roles, start=start)
    # Executions may hold the artifact finalizer: delete them while the operator still runs,
    # and drop what it could not remove, so that the namespace can go.
    try:
        kubectl.run("delete", "executions", "--all", "-n", namespace, "--wait=false")
        release_executions(kubectl, namespace)
    finally:  # a process left running would be reported in whichever test comes next
        for process in started:
            process.stop()
            print(process.log()[-20000:])  # shown by pytest when the test failed


def release_executions(kubectl: Kubectl, namespace: str) -> None:
    """Wait a little for the operator to remove its finalizers, then remove what is left."""
    deadline = time.monotonic() + 10
    while items := kubectl.json("get", "executions", "-n", namespace)["items"]:
        if time.monotonic() > deadline:
            for item in items:
                patched = kubectl.run(
                    "patch", "-n", namespace, "execution", item["metadata"]["name"],
                    "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False,
                )  # fmt: skip
                # The operator may have let it go since it was listed.
                assert patched.returncode == 0 or "NotFound" in patched.stderr, patched.stderr
            return
        time.sleep(0.2)


def apply_scenario(kubectl: Kubectl, namespace: str, scenario: str) -> None:
    documents = [d for d in yaml.safe_load_all((SCENARIOS / f"{scenario}.yaml").read_text()) if d]
    for document in documents:
        if document["kind"] == "ConfigMap" and document["metadata"]["name"] == "prompts":
            # Past what a pod carries itself (16 KiB): the phase needs a ConfigMap of its own.
            document["data"]["plan.md"] += "\n" + "Keep every step small. " * 800
    listed = {"apiVersion": "v1", "kind": "List", "items": documents}
    kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(listed))
    if scenario == "cancel":
        wait_for(
            lambda: kubectl.run(
                "logs", "-n", namespace, "cancel-0-long-a1", check=False
            ).stdout.startswith("working"),
            timeout=30,
            what="the phase to run",
        )
        kubectl.run(
            "patch", "-n", namespace, "execution", "cancel", "--type=merge",
            "-p", json.dumps({"spec": {"cancel": True}}),
        )  # fmt: skip


def reached_end(kubectl: Kubectl, namespace: str, scenario: str) -> bool:
    """The scenario's Execution reached the end it should: completed, cancelled, or (ttl)
    deleted after it completed; (cron) a run of the CronExecution completed."""
    if scenario == "cron":
        cron = kubectl.json("get", "-n", namespace, "cronexecution", "cron")
        return cron.get("status", {}).get("lastSuccessfulTime") is not None
    if scenario == "ttl":
        found = kubectl.run("get", "-n", namespace, "execution", scenario, check=False)
        return found.returncode != 0 and "NotFound" in found.stderr
    execution = kubectl.json("get", "-n", namespace, "execution", scenario)
    status: str | None = execution.get("status", {}).get("status")
    return status == ("cancelled" if scenario == "cancel" else "completed")


def refusal(permission: Permission) -> str:
    """How the API server words the refusal, which the operator's log must carry."""
    return (
        f'cannot {permission.verb} resource "{permission.resource}" '
        f'in API group "{permission.group}"'
    )


@pytest.mark.parametrize(("replicas", "expected"), [(1, []), (2, LEASE_PERMISSIONS)])
def test_the_roles_grant_exactly_the_listed_permissions(
    local_cluster: DevCluster, namespace: str, replicas: int, expected: list[Permission]
) -> None:
    objects = render_rbac(local_cluster.env, namespace, replicas)
    roles = [o for o in objects if o["kind"] == "Role"]
    granted = triples(*roles)
    assert len(granted) == len(set(granted)), "a permission is granted twice"
    assert sorted(granted) == sorted(p.triple for p in [*PERMISSIONS, *expected])
    assert {verb for group, resource, verb in granted if resource == "secrets"} == {
        "create",
        "delete",
    }
    for rule in (rule for role in roles for rule in role["rules"]):
        if "leases" in rule["resources"] and rule["verbs"] != ["create"]:
            assert rule["resourceNames"] == [LEASE]  # no other Lease in the namespace


def can_i(kubectl: Kubectl, namespace: str, account: str, *request: str) -> bool:
    """What the API server's authorizer answers for the ServiceAccount."""
    user = f"system:serviceaccount:{namespace}:{account}"
    answer = kubectl.run(
        "auth", "can-i", *request, "-n", namespace, "--as", user, check=False
    ).stdout.strip()
    assert answer.split()[0] in {"yes", "no"}, answer
    return answer.split()[0] == "yes"


@pytest.mark.parametrize("webhooks", [False, True])
def test_the_operator_may_get_only_the_webhooks_secret_and_only_when_webhooks_are_on(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str, webhooks: bool
) -> None:
    """R49: `webhooks.enabled` adds `get` on the one Secret `webhooks.secretName` and nothing
    else; without it the operator may read no Secret at all."""
    objects = render_rbac(local_cluster.env, namespace, webhooks=webhooks)
    roles = [o for o in objects if o["kind"] == "Role"]
    extra = [("", "secrets", "get")] if webhooks else []
    assert sorted(triples(*roles)) == sorted([*(p.triple for p in PERMISSIONS), *extra])
    for rule in (rule for role in roles for rule in role["rules"]):
        if "secrets" in rule["resources"] and "get" in rule["verbs"]:
            assert (rule["verbs"], rule["resourceNames"]) == (["get"], [WEBHOOKS_SECRET])
    for obj in objects:
        kubectl.apply(obj, namespace)
    account = account_name(objects)

    def may(*request: str) -> bool:
        return can_i(kubectl, namespace, account, *request)

    # RBAC objects take effect once the authorizer's informers have them.
    wait_for(lambda: may("create", "secrets"), timeout=10, what="the Role to take effect")
    assert may("get", f"secret/{WEBHOOKS_SECRET}") is webhooks
    assert not may("get", "secret/another")
    assert not may("get", "secrets")
    assert not may("list", "secrets")
    assert not may("watch", "secrets")


@pytest.mark.parametrize(
    ("scenario", "replicas"),
    [("complete", 1), ("cancel", 1), ("ttl", 1), ("cron", 1), ("queue", 1), ("complete", 2)],
)
def test_with_the_charts_role_the_operator_runs_an_execution_to_its_end(
    kubectl: Kubectl, installed: Installed, scenario: str, replicas: int
) -> None:
    operator = installed.start(installed.roles)
    apply_scenario(kubectl, installed.namespace, scenario)
    wait_for(
        lambda: reached_end(kubectl, installed.namespace, scenario),
        timeout=60,
        what=f"the {scenario} scenario to end",
    )
    assert "forbidden" not in operator.log().lower()
    # Its sidecars' artifacts went through the endpoint, with no S3 key in the namespace.
    assert "credentials endpoint listening" in operator.log()


def _cases() -> list[Any]:
    return [
        pytest.param(
            p,
            replicas,
            id=str(p),
        )
        for permissions, replicas in ((PERMISSIONS, 1), (LEASE_PERMISSIONS, 2))
        for p in permissions
        if p.scenario is not None
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("permission", "replicas"), _cases())
def test_without_any_one_permission_the_operator_logs_the_refusal_and_the_run_stops(
    kubectl: Kubectl, installed: Installed, permission: Permission, replicas: int
) -> None:
    operator = installed.start(without(installed.roles, permission))
    apply_scenario(kubectl, installed.namespace, permission.scenario)
    expected = refusal(permission)
    wait_for(lambda: expected in operator.log(), timeout=20, what=f"a logged refusal: {expected}")
    print(next(line for line in operator.log().splitlines() if expected in line))
    if permission.blocks:
        time.sleep(RUN_SECONDS)  # a run that could go on would have ended by now
        assert not reached_end(kubectl, installed.namespace, permission.scenario)
