"""Whose problem a refused create is, over Status bodies the local API server really returned
(tests/fixtures/admission/, captured from kube-apiserver v1.35.4 with a restricted namespace, a
ResourceQuota on limits, a ValidatingAdmissionPolicy, a denying webhook and an unprivileged
ServiceAccount). Cases: PodSecurity, a quota requiring limits, a ValidatingAdmissionPolicy
(422), a webhook (403 without a reason), the API's own validation and an object too large for
the API server or etcd (R57) block the phase with the denial's own message; an exceeded
quota is the quota kind; the authorizer's RBAC refusal of pods or ConfigMaps, an unreachable
webhook, an uncounted quota, a conflict and an outage are retried; the RBAC form is told from
admission's 403s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjobs.kube import admission
from agentjobs.models.contract import FailureKind

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "admission"


def status(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    assert body["kind"] == "Status"
    return body


def blocker(body: dict[str, Any], subject: str = "pod") -> Any:
    return admission.refusal_blocker(
        code=body["code"], reason=body.get("reason", ""), message=body["message"], subject=subject
    )


@pytest.mark.parametrize(
    ("fixture", "words"),
    [
        ("pod-security", 'violates PodSecurity "restricted:latest"'),
        ("quota-limits-required", "must specify limits.cpu for: agent,side"),
        ("validating-admission-policy", "pods labelled probe-deny are not allowed here"),
        ("webhook", "pod p5 must carry a cost-center label"),
    ],
)
def test_an_admission_denial_blocks_the_phase_as_config_with_its_own_message(
    fixture: str, words: str
) -> None:
    body = status(fixture)
    failure = blocker(body)
    assert failure is not None
    assert failure.kind is FailureKind.CONFIG
    assert failure.code == "AdmissionDenied"
    assert failure.message == f"the phase's pod was refused: {body['message']}"
    assert words in failure.message


def test_an_exceeded_quota_blocks_the_phase_as_quota() -> None:
    failure = blocker(status("quota-exceeded"))
    assert failure is not None
    assert failure.kind is FailureKind.QUOTA
    assert failure.code == "QuotaExceeded"
    assert "limited: limits.cpu=2" in failure.message


def test_the_apis_own_validation_blocks_the_phase_with_the_invalid_fields() -> None:
    failure = blocker(status("invalid-pod"))
    assert failure is not None
    assert (failure.kind, failure.code) == (FailureKind.CONFIG, "Invalid")
    assert "spec.tolerations[0].operator" in failure.message


def test_the_refused_object_is_named() -> None:
    failure = blocker(status("validating-admission-policy"), subject="ConfigMap")
    assert failure is not None
    assert failure.message.startswith("the phase's ConfigMap was refused: ")


@pytest.mark.parametrize("fixture", ["rbac-pods", "rbac-configmaps"])
def test_the_authorizers_refusal_is_the_operators_permission_and_is_retried(fixture: str) -> None:
    body = status(fixture)
    assert admission.is_operator_permission(code=body["code"], message=body["message"])
    assert blocker(body) is None


@pytest.mark.parametrize(
    "fixture", ["pod-security", "quota-limits-required", "quota-exceeded", "webhook"]
)
def test_admissions_403s_are_not_taken_for_missing_rbac(fixture: str) -> None:
    body = status(fixture)
    assert body["code"] == 403
    assert not admission.is_operator_permission(code=body["code"], message=body["message"])


def test_an_unreachable_webhook_is_an_outage_and_is_retried() -> None:
    assert blocker(status("webhook-unreachable")) is None


@pytest.mark.parametrize(
    ("code", "reason", "message"),
    [
        (413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"),
        (500, "InternalError", "etcdserver: request is too large"),
    ],
)
def test_r57_an_object_refused_for_its_size_blocks_the_phase_as_config(
    code: int, reason: str, message: str
) -> None:
    failure = admission.refusal_blocker(
        code=code, reason=reason, message=message, subject="ConfigMap"
    )
    assert failure is not None and failure.kind is FailureKind.CONFIG
    assert failure.message == f"the phase's ConfigMap was refused: {message}"


@pytest.mark.parametrize(
    ("code", "reason", "message"),
    [
        # The form of quota admission before the quota controller counted usage (its source:
        # apiserver/pkg/admission/plugin/resourcequota/controller.go); it passes in seconds.
        (403, "Forbidden", 'pods "p" is forbidden: status unknown for quota: q, resources: pods'),
        (409, "AlreadyExists", 'pods "p" already exists'),
        (500, "InternalError", "etcdserver: request timed out"),
        (429, "TooManyRequests", "the server has received too many requests"),
        (404, "NotFound", 'namespaces "gone" not found'),
    ],
)
def test_answers_that_are_not_a_refusal_of_the_object_are_retried(
    code: int, reason: str, message: str
) -> None:
    failure = admission.refusal_blocker(code=code, reason=reason, message=message, subject="pod")
    assert failure is None
