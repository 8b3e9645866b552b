"""Issue 21, findings 1 and 7: object names that would reach another namespace, and names
the operator derives, on the local cluster.

Cases:
- R53: an Execution that puts `../../<victim>/secrets/canary` (or `../<victim>` where the
  field is a DNS label) in every name-bearing field is refused by the API server, each
  field named in the refusal, and nothing is created; so is a Phase with such names in
  every field of its own (written by the admin: a tenant cannot write Phases);
- R53 with validation bypassed (an Execution admitted before the schema refused such
  names): the operator's own readers of a prompt, a rubric and a signing Secret, with
  its path builder and API session and the admin's credentials, read nothing of the
  victim's namespace through any traversal form, and nothing of it shows in the
  tenant's namespace;
- R54: Execution `a` with phase `b-0-c` and Execution `a-0-b` with phase `c`, and an
  Execution named with dots where a name used to be cut, each run their own Phase;
- R54: a Phase the API server refuses (here a policy refuses every Phase in the
  namespace) ends its Execution failed with the refusal's words, and the operator
  tries the create once, not again and again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjobs.adapters import paths
from agentjobs.adapters.kube import Kube
from agentjobs.controllers.phase import phase_pod
from agentjobs.models.contract import SystemFailure
from agentjobs.models.kubernetes import KeySelector
from agentjobs.services import notifier
from devcluster.testing import DevCluster, Kubectl
from tests import builders
from tests.integration import namespace_policy
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import REPO, OperatorProcess, wait_finished, wait_for
from tests.security.conftest import Tenant, Victim, leaks

pytestmark = pytest.mark.integration


@pytest.fixture
def these_crds(kubectl: Kubectl, tenant: Tenant) -> None:
    """This tree's CRDs, applied again: the cluster is shared, and another session may have
    applied its own since this session's ``crds``."""
    kubectl.run("apply", "-f", str(REPO / "crds"))
    probe = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "probe"},
        "spec": {"phases": [{"name": "p", "image": "i", "prompt": "p",
                             "serviceAccountName": "../x"}]},
    }  # fmt: skip

    def in_force() -> bool:
        result = kubectl.run(
            "create", "--dry-run=server", "-n", tenant.namespace, "-f", "-",
            input=json.dumps(probe), check=False,
        )  # fmt: skip
        return "serviceAccountName: Invalid value" in result.stderr

    wait_for(in_force, what="this tree's CRDs to be in force")


def _settings(secret: str, namespace: str) -> dict[str, Any]:
    """What a phase or `defaults` may set, with ``secret`` in every object name and
    ``namespace`` in every DNS label one."""
    key = {"name": secret, "key": "value"}
    env = [
        {"name": "A", "valueFrom": {"secretKeyRef": key}},
        {"name": "B", "valueFrom": {"configMapKeyRef": key}},
        {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                          "containerName": namespace}}},
    ]  # fmt: skip
    env_from = [{"configMapRef": {"name": secret}}, {"secretRef": {"name": secret}}]
    term = {"topologyKey": "zone", "namespaces": [namespace]}
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": [term],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": term}],
    }
    return {
        "env": env,
        "envFrom": env_from,
        "serviceAccountName": secret,
        "imagePullSecrets": [{"name": secret}],
        "priorityClassName": secret,
        "runtimeClassName": secret,
        "affinity": {"podAffinity": affinity, "podAntiAffinity": affinity},
        "outcome": {
            "rubricFrom": {"configMapKeyRef": key},
            "grader": {"command": ["grade"], "env": env, "envFrom": env_from},
        },
    }


def _refused_fields(stderr: str) -> set[str]:
    """The fields a refusal names (kubectl prints one `* <field>: Invalid value: ...` each)."""
    lines = (line.strip().removeprefix("* ") for line in stderr.splitlines())
    return {line.split(": Invalid value")[0] for line in lines if ": Invalid value" in line}


def test_traversal_names_in_every_field_are_refused_by_the_api_server(
    kubectl: Kubectl, tenant: Tenant, victim: Victim, these_crds: None
) -> None:
    secret, label = f"../../{victim.namespace}/secrets/canary", f"../{victim.namespace}"
    phase = {
        "name": "work",
        "image": BUSYBOX,
        "promptFrom": {"configMapKeyRef": {"name": secret, "key": "value"}},
        **_settings(secret, label),
    }
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "traversal"},
        "spec": {
            "defaults": _settings(secret, label),
            "phases": [phase],
            "notify": [{"url": "https://hooks.example.com/x",
                        "secretRef": {"name": secret, "key": "value"}}],
            "resumeFrom": {"name": secret},
        },
    }  # fmt: skip
    refused = tenant.kubectl.run(
        "create", "-n", tenant.namespace, "-f", "-", input=json.dumps(execution), check=False
    )
    assert refused.returncode != 0
    fields = _refused_fields(refused.stderr)
    for where in ("spec.phases[0]", "spec.defaults"):
        for field in (
            "env[0].valueFrom.secretKeyRef.name",
            "env[1].valueFrom.configMapKeyRef.name",
            "env[2].valueFrom.resourceFieldRef.containerName",
            "envFrom[0].configMapRef.name",
            "envFrom[1].secretRef.name",
            "serviceAccountName",
            "imagePullSecrets[0].name",
            "priorityClassName",
            "runtimeClassName",
            "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]",
            "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
            ".podAffinityTerm.namespaces[0]",
            "outcome.rubricFrom.configMapKeyRef.name",
            "outcome.grader.env[0].valueFrom.secretKeyRef.name",
            "outcome.grader.envFrom[1].secretRef.name",
        ):
            assert f"{where}.{field}" in fields, (where, field, refused.stderr)
    for field in (
        "spec.phases[0].promptFrom.configMapKeyRef.name",
        "spec.notify[0].secretRef.name",
        "spec.resumeFrom.name",
    ):
        assert field in fields, (field, refused.stderr)
    assert tenant.kubectl.json("get", "executions", "-n", tenant.namespace)["items"] == []

    phase_object = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "traversal-0-work"},
        "spec": {**phase, "executionName": secret, "index": 0},
    }
    refused = kubectl.run(
        "create", "--dry-run=server", "-n", tenant.namespace, "-f", "-",
        input=json.dumps(phase_object), check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    fields = _refused_fields(refused.stderr)
    for field in (
        "executionName",
        "promptFrom.configMapKeyRef.name",
        "serviceAccountName",
        "outcome.rubricFrom.configMapKeyRef.name",
        "envFrom[1].secretRef.name",
    ):
        assert f"spec.{field}" in fields, (field, refused.stderr)


def _hostile(victim: str) -> list[str]:
    return [
        f"../../{victim}/secrets/canary",
        f"../../{victim}/configmaps/canary",
        f"..%2F..%2F{victim}%2Fconfigmaps%2Fcanary",
        f"x/../../../{victim}/configmaps/canary",
        "..",
        ".",
    ]


def test_with_validation_bypassed_the_operators_readers_stay_in_their_namespace(
    kubectl: Kubectl, tenant: Tenant, victim: Victim, local_cluster: DevCluster
) -> None:
    async def read_all() -> list[str]:
        said: list[str] = []
        kube = await Kube.connect(local_cluster.env["KUBECONFIG"])
        read_secret = notifier.kube_secret_reader(kube)
        try:
            for name in _hostile(victim.namespace):
                for what in ("prompt", "rubric"):
                    ref = KeySelector(name=name, key="value")
                    found = await phase_pod.config_map_value(kube, tenant.namespace, ref, what=what)
                    assert isinstance(found, SystemFailure), (name, found)
                    said.append(found.message)
                try:
                    said.append(repr(await read_secret(tenant.namespace, name, "value")))
                except (notifier.SecretUnavailable, paths.InvalidName) as error:
                    said.append(str(error))
        finally:
            await kube.close()
        return said

    said = asyncio.run(read_all())
    assert len(said) == 3 * len(_hostile(victim.namespace))
    assert not any(victim.value in text for text in said), said
    assert leaks(kubectl, tenant.namespace, victim.value) == []


@pytest.fixture
def phases_refused(kubectl: Kubectl, namespace: str) -> Iterator[str]:
    """A ValidatingAdmissionPolicy, bound to the test's namespace, that refuses every Phase;
    yields its message once it is in force."""
    message = "no Phase may be created in this namespace"
    probe = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Phase",
        "metadata": {"name": "probe"},
        "spec": {"executionName": "probe", "index": 0, "name": "p", "prompt": "p"},
    }
    rule = {"apiGroups": ["agentjobs.io"], "apiVersions": ["*"], "resources": ["phases"]}
    with namespace_policy.refusing(
        kubectl, namespace, name=f"no-phases-{namespace}"[:63], rule=rule,
        expression="false", message=message, probe=probe,
    ):  # fmt: skip
        yield message


def test_a_refused_phase_fails_its_execution_once_with_the_refusals_words(
    tenant: Tenant, phases_refused: str, operator: OperatorProcess, tmp_path: Path
) -> None:
    execution = {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": "refused"},
        "spec": {"phases": [{"name": "work", "image": BUSYBOX, "prompt": "Work."}]},
    }
    tenant.kubectl.run("create", "-n", tenant.namespace, "-f", "-", input=json.dumps(execution))
    status = wait_finished(tenant.kubectl, tenant.namespace, "refused", timeout=30)
    assert (status["status"], status["failureClassification"]) == ("failed", "platform")
    assert phases_refused in status["taskOutcome"]["summary"]
    assert "refused Phase 'refused-0-work'" in status["taskOutcome"]["summary"]
    time.sleep(5)  # a retry loop would have tried again by now (its first delays are 1-4 s)
    log = operator.log()
    assert log.count("refused-0-work was refused") == 1, log[-4000:]
    assert f"execution {tenant.namespace}/refused: " not in log, log[-4000:]  # no retries


REPORT = builders.echo_block(builders.report())


def test_names_that_read_alike_and_dotted_names_at_the_limit_all_run(
    tenant: Tenant, operator: OperatorProcess
) -> None:
    dotted = "x" * 33 + "." + "y" * 11 + "." + "z" * 20  # cut at either dot before
    runs = {"a": "b-0-c", "a-0-b": "c", dotted: "review"}
    for name, phase in runs.items():
        execution = {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": name},
            "spec": {"phases": [{"name": phase, "image": BUSYBOX, "prompt": "Work.",
                                 "command": ["sh", "-c"], "args": [REPORT]}]},
        }  # fmt: skip
        tenant.kubectl.run("create", "-n", tenant.namespace, "-f", "-", input=json.dumps(execution))
    for name in runs:
        status = wait_finished(tenant.kubectl, tenant.namespace, name, timeout=90)
        assert status["status"] in ("completed", "failed"), (name, status)
        assert [p["name"] for p in status["phases"]] == [runs[name]]
    phases = tenant.kubectl.json("get", "phases", "-n", tenant.namespace)["items"]
    owners = {p["metadata"]["name"]: p["spec"]["executionName"] for p in phases}
    assert sorted(owners.values()) == sorted(runs), owners
    assert owners["a-0-b-0-c"] == "a-0-b"
    assert all(".-" not in name and len(name) <= 55 for name in owners), owners
