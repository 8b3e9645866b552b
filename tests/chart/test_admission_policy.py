"""The chart's opt-in ValidatingAdmissionPolicy, rendered (no cluster; its behaviour on the real
API server is tests/integration/test_admission_policy.py).

Cases: off by default (nothing rendered); on, the policy and its binding are valid Kubernetes
1.35 objects and `helm lint --strict` is clean; the validation actions and failure policy reach
them, and the schema refuses others; watched namespaces limit the binding to them; the
operator's own ServiceAccount is the one left out; a Kubernetes older than 1.34 (no CEL list
library) is refused with a clear message; its authorizer checks fit CEL's cost limits, and the
bound on the env entries it judges comes first; every field the models let a phase set is
judged by the policy or listed here as not needing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from agentjobs.models.kubernetes import PodSecurityContext, SecurityContext
from agentjobs.models.resources import PhaseTemplate
from tests.chart.conftest import CHART, Render, run_helm

KUBE = ("--kube-version", "1.35.0")
ON = {"admissionPolicy.enabled": "true"}
KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def policy_objects(render: Render, values: dict[str, str]) -> dict[str, dict[str, Any]]:
    objects = {o["kind"]: o for o in render(values, *KUBE) if o["kind"] in KINDS}
    assert set(objects) == set(KINDS)
    return objects


def test_off_by_default(render: Render) -> None:
    assert not [o for o in render({}, *KUBE) if o["kind"] in KINDS]


def test_on_it_is_valid_kubernetes_1_35_and_lints_clean(render: Render, helm: Path) -> None:
    for obj in policy_objects(render, ON).values():
        kubernetes_validate.validate(obj, "1.35.0", strict=True)
    result = run_helm(helm, "lint", "--strict", str(CHART), "--set", "admissionPolicy.enabled=true",
                      "--kube-version", "1.35.0")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout


def test_actions_and_failure_policy_reach_the_objects(render: Render) -> None:
    defaults = policy_objects(render, ON)
    assert defaults["ValidatingAdmissionPolicyBinding"]["spec"]["validationActions"] == ["Deny"]
    assert defaults["ValidatingAdmissionPolicy"]["spec"]["failurePolicy"] == "Fail"
    chosen = policy_objects(
        render,
        ON | {"admissionPolicy.validationActions": "{Warn,Audit}",
              "admissionPolicy.failurePolicy": "Ignore"},
    )  # fmt: skip
    binding = chosen["ValidatingAdmissionPolicyBinding"]
    assert binding["spec"]["validationActions"] == ["Warn", "Audit"]
    assert binding["spec"]["policyName"] == chosen["ValidatingAdmissionPolicy"]["metadata"]["name"]
    assert chosen["ValidatingAdmissionPolicy"]["spec"]["failurePolicy"] == "Ignore"


@pytest.mark.parametrize(
    "flag",
    ["admissionPolicy.validationActions={Block}", "admissionPolicy.validationActions={Deny,Warn}",
     "admissionPolicy.failurePolicy=Never",
     "admissionPolicy.enabled=yes", "admissionPolicy.validationAction={Deny}"],
)  # fmt: skip
def test_the_schema_refuses_other_values(helm: Path, flag: str) -> None:
    result = run_helm(helm, "template", "agentjobs", str(CHART), *KUBE, "--set", flag)
    assert result.returncode != 0
    assert "admissionPolicy" in result.stderr


def test_watched_namespaces_limit_the_binding_to_them(render: Render) -> None:
    everywhere = policy_objects(render, ON)["ValidatingAdmissionPolicyBinding"]
    assert "matchResources" not in everywhere["spec"]
    listed = policy_objects(render, ON | {"watchNamespaces": "{team-a,team-b}"})
    selector = listed["ValidatingAdmissionPolicyBinding"]["spec"]["matchResources"]
    assert selector["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a", "team-b"]}
    ]


def test_only_the_operators_own_service_account_is_left_out(render: Render) -> None:
    named = policy_objects(render, ON | {"serviceAccount.name": "runner"})
    (condition,) = named["ValidatingAdmissionPolicy"]["spec"]["matchConditions"]
    assert "'system:serviceaccount:agentjobs-system:runner'" in condition["expression"]


def test_an_older_kubernetes_is_refused_with_a_clear_message(helm: Path) -> None:
    result = run_helm(helm, "template", "agentjobs", str(CHART), "--kube-version", "1.33.4",
                      "--set", "admissionPolicy.enabled=true")  # fmt: skip
    assert result.returncode != 0
    assert "admissionPolicy.enabled needs Kubernetes 1.34 or later" in result.stderr


def test_authorizer_checks_fit_the_cel_cost_limits(render: Render) -> None:
    """A check costs 350,000: at most 2 fit in one expression's 1,000,000, and all of them, each
    variable counted once, must fit in a request's 10,000,000 with room for the rest."""
    policy = policy_objects(render, ON)["ValidatingAdmissionPolicy"]["spec"]
    expressions = [v["expression"] for v in policy["variables"] + policy["validations"]]
    checks = [expression.count(".check(") for expression in expressions]
    assert max(checks) <= 2
    assert 10 <= sum(checks) <= 20


def test_the_bound_on_what_it_judges_comes_before_every_costly_check(render: Render) -> None:
    """Validations run in order until the budget runs out; under failurePolicy Ignore an
    expression that runs it out admits, so the bound must be judged first."""
    validations = policy_objects(render, ON)["ValidatingAdmissionPolicy"]["spec"]["validations"]
    first, *rest = [v["expression"] for v in validations]
    assert first == "variables.unchanged || variables.entries <= 4096"
    assert all("variables.entries" not in expression for expression in rest)


# What a phase may set that the policy leaves alone: what the agent runs and how its run is
# read, and placement, which the namespace's own admission (PodTolerationRestriction, quotas on
# priority classes, ...) judges on the operator's pods as on anyone's. A phase's repositories
# only narrow spec.repositories[], whose credentialsSecret is judged. Its limits only stop it
# sooner (R70).
UNJUDGED_SETTINGS = {
    "name", "prompt", "image", "command", "args", "resources", "timeoutSeconds", "repositories",
    "transcriptFormat", "outputs", "workspace", "retry", "keepPods", "limits",
    "nodeSelector", "tolerations", "affinity", "priorityClassName", "runtimeClassName",
}  # fmt: skip
# Security fields the restricted Pod Security profile allows with any value.
INSIDE_RESTRICTED_WHATEVER_THEIR_VALUE = {
    "runAsGroup", "fsGroup", "supplementalGroups", "readOnlyRootFilesystem",
}  # fmt: skip


def test_every_field_a_phase_may_set_is_judged_or_known_not_to_need_it(render: Render) -> None:
    """A field added to the models fails here until someone decides whether the policy needs it."""
    variables = {
        v["name"]: v["expression"]
        for v in policy_objects(render, ON)["ValidatingAdmissionPolicy"]["spec"]["variables"]
    }
    for field in (f.alias for f in PhaseTemplate.model_fields.values()):
        assert field in UNJUDGED_SETTINGS or f"s.?{field}" in variables["unchanged"], field
    for model, prefix in ((PodSecurityContext, "podSecurityContext"),
                          (SecurityContext, "securityContext")):  # fmt: skip
        for field in (f.alias for f in model.model_fields.values()):
            assert (
                field in INSIDE_RESTRICTED_WHATEVER_THEIR_VALUE
                or f"'{prefix}.{field}" in variables["relaxed"]
            ), f"{prefix}.{field}"
