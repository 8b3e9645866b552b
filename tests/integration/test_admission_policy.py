"""The chart's opt-in ValidatingAdmissionPolicy, on the real API server.

The chart is rendered with `admissionPolicy.enabled=true` for the test's namespace only
(`watchNamespaces`) and applied; Executions and Phases are then created as ServiceAccounts of
that namespace (`kubectl --as`), each holding only the Roles the test grants it. Creations are
server-side dry runs: admission judges them, nothing runs. Cases:

- every reference to a Secret, a ConfigMap or a ServiceAccount that the CRDs let an Execution or
  a Phase make (found by walking their schemas, tests/chart/crd_references.py) is refused, the
  message naming the field, until the user holds what it takes; only the listed exemptions
  are not judged;
- a Secret in `env` or `envFrom` is refused, with the policy's message naming the phase, the
  field and the Secret, until the user may get that very Secret; the grader's, in a phase's
  outcome and in the defaults', the same;
- a ConfigMap a pod is given (`promptFrom`, `rubricFrom`, env) needs `get` on it;
- a `serviceAccountName` (here in `spec.defaults`) needs pod creation and impersonation of that
  ServiceAccount (`get` on it is not enough);
- each security setting outside the restricted Pod Security profile, `imagePullSecrets`, and
  `podLabels` but Kueue's queue name, is refused, naming it, until the user may create pods,
  while settings inside the profile need nothing;
- a Phase created directly is judged the same way, but not the operator's own Phases;
- a CronExecution's template is judged as an Execution would be, naming its fields under
  `spec.executionTemplate.spec`;
- an update is judged only when it changes a guarded field (a label or a cancel is not), and a
  grader's Secret added by an update is judged;
- a spec with more env entries than the policy can judge within CEL's budget is refused first,
  so that even with failurePolicy Ignore it cannot run the budget out and be admitted;
- the worst case (32 phases with graders, 8 Secrets, 4 ConfigMaps and 4 ServiceAccounts each
  granted by name) stays within CEL's cost budget, and more distinct names than the policy
  checks one by one need the namespace-wide right.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from devcluster.testing import DevCluster, Kubectl
from tests.chart import crd_references
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import REPO, wait_for

CHART = REPO / "charts" / "agentjobs"
POLICY_SUFFIX = "-agentjobs-phase-pods"


@dataclass(frozen=True)
class Tenant:
    """A namespace under the policy, whose ServiceAccounts get only what a test grants."""

    kubectl: Kubectl
    namespace: str
    release: str

    def user(self, account: str) -> str:
        return f"system:serviceaccount:{self.namespace}:{account}"

    @property
    def operator(self) -> str:
        """The chart's ServiceAccount for this release (named after the release's full name)."""
        return f"{self.release}-agentjobs"

    def grant(self, account: str, verb: str, resource: str, name: str | None = None) -> None:
        role = re.sub(r"[^a-z0-9-]", "-", f"{account}-{verb}-{resource}-{name or 'all'}")
        self.kubectl.run(
            "create", "role", role, "-n", self.namespace, f"--verb={verb}",
            f"--resource={resource}", *([f"--resource-name={name}"] if name else []),
        )  # fmt: skip
        self.kubectl.run(
            "create", "rolebinding", role, "-n", self.namespace, f"--role={role}",
            f"--serviceaccount={self.namespace}:{account}",
        )  # fmt: skip

    def create(self, account: str, manifest: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """Create ``manifest`` as ``account`` in a server-side dry run."""
        return self.kubectl.run(
            "create", "--dry-run=server", "-o", "name", "-n", self.namespace,
            f"--as={self.user(account)}", "-f", "-",
            input=json.dumps(manifest), check=False,
        )  # fmt: skip

    def denial(self, account: str, manifest: dict[str, Any]) -> str:
        result = self.create(account, manifest)
        assert result.returncode != 0, f"{account} was allowed to create {manifest}"
        assert f"ValidatingAdmissionPolicy '{self.release}{POLICY_SUFFIX}'" in result.stderr, (
            result.stderr
        )
        return result.stderr

    def allowed(self, account: str, manifest: dict[str, Any]) -> bool:
        return self.create(account, manifest).returncode == 0

    def assert_allowed(self, account: str, manifest: dict[str, Any]) -> None:
        """Allowed, within a few seconds: a new RoleBinding reaches the authorizer's cache."""
        wait_for(lambda: self.allowed(account, manifest), timeout=10, what=f"{account} allowed")


def execution(defaults: dict[str, Any] | None = None, **phase: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "policy-probe"},
        "spec": {
            "defaults": {"image": BUSYBOX, **(defaults or {})},
            "phases": [{"name": "draft", "prompt": "Write it.", **phase}],
        },
    }


def secret_env(name: str) -> dict[str, Any]:
    return {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": name, "key": "key"}}}


def rendered_policy(
    cluster: DevCluster, release: str, namespace: str, failure_policy: str = "Fail"
) -> str:
    """The chart's policy and binding, bound to ``namespace`` only."""
    return subprocess.run(
        ["helm", "template", release, str(CHART), "--namespace", namespace,
         "--kube-version", "1.35.0", "--set", "admissionPolicy.enabled=true",
         "--set", f"admissionPolicy.failurePolicy={failure_policy}",
         "--set", f"watchNamespaces={{{namespace}}}",
         "--show-only", "templates/admission-policy.yaml"],
        env=cluster.env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


@pytest.fixture
def tenant(
    local_cluster: DevCluster,
    kubectl: Kubectl,
    crds: None,
    namespace: str,
    request: pytest.FixtureRequest,
) -> Iterator[Tenant]:
    """The policy bound to the test's namespace (with the failure policy a test may give as
    its indirect parameter); ServiceAccount `alice` may create and patch Executions there, and
    nothing else."""
    release = f"policy-{namespace[-6:]}"
    rendered = rendered_policy(local_cluster, release, namespace, getattr(request, "param", "Fail"))
    kubectl.run("apply", "-f", "-", input=rendered)
    found = Tenant(kubectl, namespace, release)
    for account in ("alice", found.operator, "robot", "other"):
        kubectl.run("create", "serviceaccount", account, "-n", namespace)
    found.grant("alice", "create", "executions.agentjobs.io")
    found.grant("alice", "patch", "executions.agentjobs.io")
    # The policy takes effect once the API server's informer has it.
    probe = execution(env=[secret_env("probe")])
    wait_for(
        lambda: "ValidatingAdmissionPolicy" in found.create("alice", probe).stderr,
        what="the policy to take effect",
    )
    yield found
    kubectl.run("delete", "-f", "-", "--wait=false", input=rendered)


def test_a_secret_in_env_needs_get_on_that_very_secret(tenant: Tenant) -> None:
    alice = tenant.user("alice")
    assert tenant.allowed("alice", execution())
    manifest = execution(env=[secret_env("api-key")], envFrom=[{"secretRef": {"name": "shared"}}])

    assert (
        "a pod given Secret api-key (asked for by spec.phases[0].env[0].valueFrom.secretKeyRef "
        f"(phase draft)) takes permission to get it, and {alice} may not get Secret api-key in "
        f"namespace {tenant.namespace}"
    ) in tenant.denial("alice", manifest)

    tenant.grant("alice", "get", "secrets", "api-key")
    wait_for(lambda: "Secret api-key" not in tenant.denial("alice", manifest), timeout=10)
    assert (
        "a pod given Secret shared (asked for by spec.phases[0].envFrom[0].secretRef (phase draft))"
    ) in tenant.denial("alice", manifest)

    tenant.grant("alice", "get", "secrets", "shared")
    tenant.assert_allowed("alice", manifest)


def graded(**grader: Any) -> dict[str, Any]:
    return {"outcome": {"rubric": "Graded.", "grader": {"image": BUSYBOX, **grader}}}


def test_a_graders_secrets_need_get_in_a_phase_and_in_the_defaults(tenant: Tenant) -> None:
    alice = tenant.user("alice")
    manifest = execution(
        defaults=graded(envFrom=[{"secretRef": {"name": "shared"}}]),
        **graded(env=[secret_env("api-key")]),
    )

    # One refusal at a time, the defaults' first.
    assert (
        "a pod given Secret shared (asked for by spec.defaults.outcome.grader.envFrom[0].secretRef)"
        f" takes permission to get it, and {alice} may not get Secret shared in namespace "
        f"{tenant.namespace}"
    ) in tenant.denial("alice", manifest)

    tenant.grant("alice", "get", "secrets", "shared")
    in_phase = (
        "a pod given Secret api-key (asked for by spec.phases[0].outcome.grader.env[0].valueFrom"
        ".secretKeyRef (phase draft))"
    )
    wait_for(lambda: in_phase in tenant.denial("alice", manifest), timeout=10)
    tenant.grant("alice", "get", "secrets", "api-key")
    tenant.assert_allowed("alice", manifest)


def test_a_config_map_a_pod_is_given_needs_get_on_it(tenant: Tenant) -> None:
    alice = tenant.user("alice")
    manifest = execution(
        defaults=graded(envFrom=[{"configMapRef": {"name": "settings"}}]),
        promptFrom={"configMapKeyRef": {"name": "prompts", "key": "draft"}},
    )
    del manifest["spec"]["phases"][0]["prompt"]

    assert (
        "a pod given ConfigMap settings (asked for by "
        "spec.defaults.outcome.grader.envFrom[0].configMapRef) takes permission to get it, and "
        f"{alice} may not get ConfigMap settings in namespace {tenant.namespace}"
    ) in tenant.denial("alice", manifest)

    tenant.grant("alice", "get", "configmaps", "settings")
    prompts = (
        "a pod given ConfigMap prompts (asked for by spec.phases[0].promptFrom.configMapKeyRef "
        "(phase draft))"
    )
    wait_for(lambda: prompts in tenant.denial("alice", manifest), timeout=10)
    tenant.grant("alice", "get", "configmaps", "prompts")
    tenant.assert_allowed("alice", manifest)


def test_a_service_account_needs_pod_creation_and_impersonation(tenant: Tenant) -> None:
    alice, namespace = tenant.user("alice"), tenant.namespace
    manifest = execution(defaults={"serviceAccountName": "robot"})

    assert (
        "a pod that runs as a ServiceAccount (asked for by spec.defaults.serviceAccountName) takes "
        f"permission to create pods, and {alice} may not create pods in namespace {namespace}"
    ) in tenant.denial("alice", manifest)

    tenant.grant("alice", "create", "pods")
    tenant.grant("alice", "get", "serviceaccounts")  # seeing it is not acting as it
    impersonation = (
        "a pod that runs as ServiceAccount robot (asked for by spec.defaults.serviceAccountName) "
        f"takes permission to impersonate it, and {alice} may not impersonate ServiceAccount robot"
    )
    wait_for(lambda: impersonation in tenant.denial("alice", manifest), timeout=10)

    tenant.grant("alice", "impersonate", "serviceaccounts", "robot")
    tenant.assert_allowed("alice", manifest)
    # The right is per ServiceAccount: a phase that names another one is still refused.
    other = execution(defaults={"serviceAccountName": "robot"}, serviceAccountName="other")
    assert (
        "ServiceAccount other (asked for by spec.phases[0].serviceAccountName (phase draft))"
        in tenant.denial("alice", other)
    )


OUTSIDE_RESTRICTED = {
    "podSecurityContext.runAsNonRoot=false": {"podSecurityContext": {"runAsNonRoot": False}},
    "podSecurityContext.runAsUser=0": {"podSecurityContext": {"runAsUser": 0}},
    "podSecurityContext.seccompProfile.type=Unconfined": {
        "podSecurityContext": {"seccompProfile": {"type": "Unconfined"}}
    },
    "securityContext.privileged=true": {"securityContext": {"privileged": True}},
    "securityContext.allowPrivilegeEscalation=true": {
        "securityContext": {"allowPrivilegeEscalation": True}
    },
    "securityContext.capabilities": {
        "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}}
    },
    # The phase's capabilities replace the operator's: not dropping ALL keeps them all.
    "securityContext.capabilities ": {
        "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}
    },
    "securityContext.runAsNonRoot=false": {"securityContext": {"runAsNonRoot": False}},
    "securityContext.runAsUser=0": {"securityContext": {"runAsUser": 0}},
    "securityContext.seccompProfile.type=Unconfined": {
        "securityContext": {"seccompProfile": {"type": "Unconfined"}}
    },
}
INSIDE_RESTRICTED = [
    {"podSecurityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 0,
                            "fsGroup": 0, "supplementalGroups": [0],
                            "seccompProfile": {"type": "Localhost", "localhostProfile": "a.json"}},
     "securityContext": {"privileged": False, "allowPrivilegeEscalation": False,
                         "readOnlyRootFilesystem": False, "runAsUser": 1000,
                         "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}},
]  # fmt: skip


def test_security_settings_outside_the_restricted_profile_need_pod_creation(
    tenant: Tenant,
) -> None:
    alice, namespace = tenant.user("alice"), tenant.namespace
    for settings in INSIDE_RESTRICTED:
        assert tenant.allowed("alice", execution(**settings)), settings
    for field, settings in OUTSIDE_RESTRICTED.items():
        message = tenant.denial("alice", execution(**settings))
        assert (
            f"a pod outside the restricted Pod Security profile (asked for by spec.phases[0]."
            f"{field.strip()}"
        ) in message
        assert f"{alice} may not create pods in namespace {namespace}" in message

    # A pull Secret is used, never read: pod creation is what it takes.
    pulling = execution(imagePullSecrets=[{"name": "regcred"}])
    assert (
        "a pod that pulls its image with a Secret (asked for by spec.phases[0].imagePullSecrets "
        f"(phase draft)) takes permission to create pods, and {alice} may not create pods"
    ) in tenant.denial("alice", pulling)

    # Labels may put a pod under a NetworkPolicy; Kueue's queue name alone takes nothing.
    assert tenant.allowed("alice", execution(podLabels={"kueue.x-k8s.io/queue-name": "agents"}))
    labelled = execution(defaults={"podLabels": {"role": "db-client"}})
    assert (
        "a pod with labels its author chose (asked for by spec.defaults.podLabels) takes "
        f"permission to create pods, and {alice} may not create pods"
    ) in tenant.denial("alice", labelled)

    tenant.grant("alice", "create", "pods")
    for settings in OUTSIDE_RESTRICTED.values():
        tenant.assert_allowed("alice", execution(**settings))
    tenant.assert_allowed("alice", pulling)
    tenant.assert_allowed("alice", labelled)


PHASE = {
    "apiVersion": "agentjobs.io/v1alpha1",
    "kind": "Phase",
    "metadata": {"name": "policy-probe-0-draft"},
    "spec": {"executionName": "policy-probe", "index": 0, "name": "draft",
             "image": BUSYBOX, "prompt": "Write it."},
}  # fmt: skip


def test_a_phase_created_directly_is_judged_too_but_not_the_operators_own(tenant: Tenant) -> None:
    phase = copy.deepcopy(PHASE)
    phase["spec"]["env"] = [secret_env("api-key")]
    for account in ("alice", tenant.operator):
        tenant.grant(account, "create", "phases.agentjobs.io")

    wait_for(
        lambda: (
            (
                "a pod given Secret api-key (asked for by spec.env[0].valueFrom.secretKeyRef "
                "(phase draft))"
            )
            in tenant.denial("alice", phase)
        ),
        timeout=10,
    )
    # The operator copies an Execution the policy has admitted; it may not read Secrets itself.
    tenant.assert_allowed(tenant.operator, phase)


def test_an_update_is_judged_only_when_it_changes_a_guarded_field(tenant: Tenant) -> None:
    created = execution(defaults={"env": [secret_env("api-key")]}, serviceAccountName="robot")
    created["spec"]["cancel"] = True  # nothing to run, even if an operator watched here
    tenant.kubectl.apply(created, tenant.namespace)
    tenant.grant("alice", "get", "executions.agentjobs.io")  # kubectl label reads it first
    as_alice = ["-n", tenant.namespace, f"--as={tenant.user('alice')}", "execution/policy-probe"]

    labelled = ("label", *as_alice, "team=ml", "--overwrite")
    wait_for(lambda: tenant.kubectl.run(*labelled, check=False).returncode == 0, timeout=10)
    tenant.kubectl.run(
        "patch", *as_alice, "--type=merge", "-p", '{"spec": {"defaults": {"timeoutSeconds": 60}}}'
    )
    refused = tenant.kubectl.run(
        "patch", *as_alice, "--type=merge",
        "-p", '{"spec": {"defaults": {"env": [{"name": "A", "value": "1"}]}}}', check=False,
    )  # fmt: skip
    # The whole result is judged: the phase's ServiceAccount, which alice may not use, too.
    assert "spec.phases[0].serviceAccountName (phase draft)" in refused.stderr, refused.stderr


def test_a_graders_secret_added_by_an_update_is_judged(tenant: Tenant) -> None:
    created = execution()
    created["spec"]["cancel"] = True  # nothing to run, even if an operator watched here
    tenant.kubectl.apply(created, tenant.namespace)
    tenant.grant("alice", "get", "executions.agentjobs.io")  # kubectl patch reads it first
    as_alice = ["-n", tenant.namespace, f"--as={tenant.user('alice')}", "execution/policy-probe"]
    later = {"spec": {"defaults": graded(envFrom=[{"secretRef": {"name": "api-key"}}])}}
    patch = ("patch", *as_alice, "--type=merge", "-p", json.dumps(later))
    refusal = (
        "a pod given Secret api-key (asked for by "
        "spec.defaults.outcome.grader.envFrom[0].secretRef)"
    )

    wait_for(lambda: refusal in tenant.kubectl.run(*patch, check=False).stderr, timeout=10)
    tenant.grant("alice", "get", "secrets", "api-key")
    wait_for(lambda: tenant.kubectl.run(*patch, check=False).returncode == 0, timeout=10)


def test_the_worst_case_stays_within_the_cel_cost_budget(tenant: Tenant) -> None:
    secrets = [f"key-{n}" for n in range(8)]
    maps = [f"map-{n}" for n in range(4)]
    accounts = ["robot", "other", "third", "fourth"]
    for name in secrets:
        tenant.grant("alice", "get", "secrets", name)
    for name in maps:
        tenant.grant("alice", "get", "configmaps", name)
    for name in accounts:
        tenant.grant("alice", "impersonate", "serviceaccounts", name)
    tenant.grant("alice", "create", "pods")
    container = {
        "env": [secret_env(name) for name in secrets]
        + [{"name": "MAP", "valueFrom": {"configMapKeyRef": {"name": name, "key": "key"}}}
           for name in maps],
        "envFrom": [{"secretRef": {"name": name}} for name in secrets]
        + [{"configMapRef": {"name": name}} for name in maps],
    }  # fmt: skip
    manifest = execution()
    manifest["spec"]["phases"] = [
        {"name": f"p{n}", "promptFrom": {"configMapKeyRef": {"name": maps[0], "key": "p"}},
         "serviceAccountName": accounts[n % 4], **container,
         "outcome": {"rubricFrom": {"configMapKeyRef": {"name": maps[1], "key": "r"}},
                     "grader": {"image": BUSYBOX, **container}},
         **OUTSIDE_RESTRICTED["securityContext.privileged=true"]}
        for n in range(32)
    ]  # fmt: skip
    tenant.assert_allowed("alice", manifest)

    grader = manifest["spec"]["phases"][0]["outcome"]["grader"]
    grader["env"].append(secret_env("key-8"))
    assert (
        "the phases reference more than 8 different Secrets, and "
        f"{tenant.user('alice')} may not get every Secret in namespace {tenant.namespace}: "
        "this policy checks at most 8 by name"
    ) in tenant.denial("alice", manifest)
    tenant.grant("alice", "get", "secrets")
    tenant.assert_allowed("alice", manifest)

    grader["envFrom"].append({"configMapRef": {"name": "map-4"}})
    assert (
        "the phases reference more than 4 different ConfigMaps, and "
        f"{tenant.user('alice')} may not get every ConfigMap in namespace {tenant.namespace}: "
        "this policy checks at most 4 by name"
    ) in tenant.denial("alice", manifest)
    tenant.grant("alice", "get", "configmaps")
    tenant.assert_allowed("alice", manifest)

    manifest["spec"]["phases"][0]["serviceAccountName"] = "fifth"
    assert "the phases name 5 different ServiceAccounts; this policy allows at most 4" in (
        tenant.denial("alice", manifest)
    )


@pytest.mark.parametrize("tenant", ["Ignore"], indirect=True)
def test_no_spec_can_spend_the_budget_before_it_is_judged_even_when_failures_are_ignored(
    tenant: Tenant,
) -> None:
    """Running out of CEL budget is a failure, which failurePolicy Ignore admits: a spec padded
    past what the policy can judge is refused before anything costly is evaluated."""
    secrets = [{"secretRef": {"name": "api-key"}}] * 64
    padded = execution(defaults=OUTSIDE_RESTRICTED["securityContext.privileged=true"])
    padded["spec"]["phases"] = [
        {"name": f"p{n}", "prompt": "Write it.", "envFrom": secrets, **graded(envFrom=secrets)}
        for n in range(32)
    ]
    # 4096 entries are judged: the privileged pod and the Secret are what alice may not have.
    assert "a pod outside the restricted Pod Security profile" in tenant.denial("alice", padded)

    padded["spec"]["defaults"]["env"] = [{"name": "ONE", "value": "more"}]
    assert (
        "the phases and their graders set 4097 env and envFrom entries in all; this policy "
        "judges at most 4096"
    ) in tenant.denial("alice", padded)


# Reference-bearing fields the policy does not judge, and why.
EXEMPT = {
    # Never reaches a pod: the operator signs webhooks with it, and reads only the one Secret
    # the chart names (webhooks.secretName), refusing others. `get` on it would let its holder
    # forge every webhook of the namespace, more than having the operator sign its own events.
    "spec.notify[].secretRef": "signs the operator's webhooks, never given to a pod",
    "spec.executionTemplate.spec.notify[].secretRef": "the same, in a CronExecution's template",
}


def grant_every_probe(tenant: Tenant, probes: dict[crd_references.Reference, str]) -> None:
    """One Role giving alice what each probed reference takes: `get` on each Secret and
    ConfigMap, `impersonate` on each ServiceAccount, and `create` on pods."""
    rules: list[dict[str, Any]] = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]
    for kind, resource, verb in (("Secret", "secrets", "get"), ("ConfigMap", "configmaps", "get"),
                                 ("ServiceAccount", "serviceaccounts", "impersonate")):  # fmt: skip
        names = sorted({name for r, name in probes.items() if r.kind == kind})
        if names:
            rules.append({"apiGroups": [""], "resources": [resource], "verbs": [verb],
                          "resourceNames": names})  # fmt: skip
    meta = {"name": "alice-every-probe", "namespace": tenant.namespace}
    tenant.kubectl.apply(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
         "rules": rules},
        tenant.namespace,
    )  # fmt: skip
    tenant.kubectl.apply(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": meta["name"]},
         "subjects": [{"kind": "ServiceAccount", "name": "alice",
                       "namespace": tenant.namespace}]},
        tenant.namespace,
    )  # fmt: skip


def check_every_reference(tenant: Tenant, crd: str, base: dict[str, Any]) -> None:
    """Probe each reference-bearing field of ``crd``'s schema on its own, with a name alice may
    not use: each must be refused, naming the field, then admitted once she may."""
    spec = crd_references.spec_schema(yaml.safe_load((REPO / "crds" / f"{crd}.yaml").read_text()))
    found = crd_references.references(spec)
    assert found, f"no references found in {crd}: the walk is broken"
    probes = {r: f"probe-{n}" for n, r in enumerate(found) if r.field not in EXEMPT}
    manifests = {r: crd_references.probe(base, spec, r, name) for r, name in probes.items()}

    unjudged = {}
    for reference, manifest in manifests.items():
        result = tenant.create("alice", manifest)
        if result.returncode == 0 or reference.at not in result.stderr:
            unjudged[reference.field] = result.stderr or "admitted"
    assert not unjudged, f"the policy does not judge these fields of {crd}: {unjudged}"

    grant_every_probe(tenant, probes)
    for manifest in manifests.values():
        tenant.assert_allowed("alice", manifest)


def test_every_reference_an_execution_can_make_is_judged(tenant: Tenant) -> None:
    check_every_reference(tenant, "executions", execution())


def test_every_reference_a_cron_executions_template_can_make_is_judged(tenant: Tenant) -> None:
    """The operator's Executions pass the policy as the operator's own: the template they are
    made from is what is judged, as its author's (R74)."""
    tenant.grant("alice", "create", "cronexecutions.agentjobs.io")
    cron = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "CronExecution",
        "metadata": {"name": "policy-probe"},
        "spec": {"schedule": "@daily", "executionTemplate": {"spec": execution()["spec"]}},
    }
    check_every_reference(tenant, "cronexecutions", cron)


def test_every_reference_a_phase_can_make_is_judged(tenant: Tenant) -> None:
    tenant.grant("alice", "create", "phases.agentjobs.io")
    check_every_reference(tenant, "phases", PHASE)
