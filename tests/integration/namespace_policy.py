"""A ValidatingAdmissionPolicy that refuses something in one namespace, for the tests that
need the API server to say no."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from devcluster.testing import Kubectl
from tests.integration.operator_fixtures import wait_for


@contextmanager
def refusing(
    kubectl: Kubectl,
    namespace: str,
    *,
    name: str,
    rule: dict[str, Any],
    expression: str,
    message: str,
    probe: dict[str, Any],
) -> Iterator[None]:
    """A policy bound to ``namespace`` that refuses, with ``message``, each CREATE matching
    ``rule`` for which ``expression`` is false; entered once it refuses ``probe`` (a server
    dry run), removed on exit."""
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{**rule, "operations": ["CREATE"]}]},
            "validations": [{"expression": expression, "message": message}],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
        },
    }
    listed = {"kind": "List", "apiVersion": "v1", "items": [policy, binding]}
    kubectl.run("apply", "-f", "-", input=json.dumps(listed))

    def in_force() -> bool:
        result = kubectl.run(
            "create", "--dry-run=server", "-n", namespace, "-f", "-",
            input=json.dumps(probe), check=False,
        )  # fmt: skip
        return result.returncode != 0 and message in result.stderr

    try:
        wait_for(in_force, what="the policy to be in force")
        yield
    finally:
        kubectl.run("delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", name)
