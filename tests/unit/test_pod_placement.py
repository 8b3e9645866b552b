"""Phase pods that fit a real cluster: every placement, pull and volume field a phase (or
`defaults`) may set, and what the operator's flags add.

Cases: imagePullSecrets (the phase's first, then the operator's, each name once), nodeSelector,
tolerations, affinity, priorityClassName and runtimeClassName reach the pod spec and are absent
when unset; `defaults` give them to a phase that sets none, a phase's own win; the workspace's
sizeLimit caps the workspace emptyDir only; HOME is a writable emptyDir of its own unless the
phase sets HOME; the pod's fsGroup is the workspace group unless the operator or the phase names
one; the fetcher leaves the output and input directories setgid and group-writable; the sidecars
get the operator's requests and limits, the agent the phase's; the flags parse into them; the
schema refuses a wrong toleration or size with its own message.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from agentjobs.cli import run
from agentjobs.contract.phase import phase_status
from agentjobs.kube import in_pod, pod_placement, pod_security, pods
from agentjobs.models.crd import structural_schema
from agentjobs.models.kubernetes import DNS_SUBDOMAIN, PodSecurityContext, ResourceRequirements
from agentjobs.models.resources import ExecutionSpec, PhaseSpec
from tests.unit import test_pods

OWNER = pods.Owner("agentjobs.io/v1alpha1", "Phase", "demo-0-plan", "uid-1")
# The pod builder's own test sidecars, without inputs: the fetcher is then a shell script.
SIDECARS = dataclasses.replace(test_pods.SIDECARS, inputs=None)
SIDECAR_RESOURCES = ResourceRequirements(
    requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "500m", "memory": "256Mi"}
)
AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["agents"]}]}
            ]
        }
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 50,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app": "x"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    },
}
TOLERATION = {"key": "agents", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}


def spec(**fields: Any) -> PhaseSpec:
    return PhaseSpec.model_validate(
        {"executionName": "demo", "index": 0, "name": "plan", "image": "agent:1", "prompt": "P"}
        | fields
    )


def pod(
    phase: PhaseSpec,
    sidecars: pods.Sidecars | None = None,
    security: pod_security.PodSecurity | None = None,
    pull_secrets: tuple[str, ...] = (),
) -> dict[str, Any]:
    return pods.phase_pod(
        phase,
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        attempt=1,
        sidecars=sidecars,
        security=security or pod_security.PodSecurity(),
        pull_secrets=pull_secrets,
    )


def containers(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    spec_ = manifest["spec"]
    return {c["name"]: c for c in [*spec_["containers"], *spec_.get("initContainers", [])]}


def volumes(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in manifest["spec"]["volumes"]}


def test_every_placement_field_of_the_phase_reaches_the_pod() -> None:
    phase = spec(
        imagePullSecrets=[{"name": "registry"}],
        nodeSelector={"pool": "agents"},
        tolerations=[TOLERATION, {"operator": "Exists", "effect": "NoExecute"}],
        affinity=AFFINITY,
        priorityClassName="batch-low",
        runtimeClassName="gvisor",
    )
    pod_spec = pod(phase)["spec"]
    assert pod_spec["imagePullSecrets"] == [{"name": "registry"}]
    assert pod_spec["nodeSelector"] == {"pool": "agents"}
    assert pod_spec["tolerations"] == [TOLERATION, {"operator": "Exists", "effect": "NoExecute"}]
    assert pod_spec["affinity"] == AFFINITY
    assert pod_spec["priorityClassName"] == "batch-low"
    assert pod_spec["runtimeClassName"] == "gvisor"


def test_unset_placement_fields_are_left_to_the_cluster() -> None:
    pod_spec = pod(spec())["spec"]
    for field in (
        "imagePullSecrets",
        "nodeSelector",
        "tolerations",
        "affinity",
        "priorityClassName",
        "runtimeClassName",
    ):
        assert field not in pod_spec


def test_the_operators_pull_secrets_follow_the_phases_each_name_once() -> None:
    phase = spec(imagePullSecrets=[{"name": "registry"}, {"name": "shared"}])
    pod_spec = pod(phase, pull_secrets=("shared", "operator-registry"))["spec"]
    names = [item["name"] for item in pod_spec["imagePullSecrets"]]
    assert names == ["registry", "shared", "operator-registry"]
    assert pod(spec(), pull_secrets=("operator-registry",))["spec"]["imagePullSecrets"] == [
        {"name": "operator-registry"}
    ]


def test_defaults_give_placement_to_a_phase_and_the_phases_own_win() -> None:
    execution = ExecutionSpec.model_validate(
        {
            "defaults": {
                "image": "agent:1",
                "nodeSelector": {"pool": "agents"},
                "tolerations": [TOLERATION],
                "priorityClassName": "batch-low",
                "workspace": {"sizeLimit": "1Gi"},
            },
            "phases": [
                {"name": "a", "prompt": "A"},
                {"name": "b", "prompt": "B", "nodeSelector": {"pool": "gpu"}},
            ],
        }
    )
    first = phase_status.phase_spec(execution, execution_name="demo", index=0)
    second = phase_status.phase_spec(execution, execution_name="demo", index=1)
    assert pod(first)["spec"]["nodeSelector"] == {"pool": "agents"}
    assert pod(second)["spec"]["nodeSelector"] == {"pool": "gpu"}
    assert pod(second)["spec"]["tolerations"] == [TOLERATION]
    assert pod(second)["spec"]["priorityClassName"] == "batch-low"
    assert volumes(pod(second))["workspace"]["emptyDir"] == {"sizeLimit": "1Gi"}


def test_the_size_limit_caps_the_workspace_volume_only() -> None:
    manifest = pod(spec(workspace={"sizeLimit": "2Gi"}))
    assert volumes(manifest)["workspace"]["emptyDir"] == {"sizeLimit": "2Gi"}
    assert volumes(manifest)["tmp"]["emptyDir"] == {}
    assert volumes(pod(spec()))["workspace"]["emptyDir"] == {}


def test_home_is_a_writable_volume_of_its_own() -> None:
    manifest = pod(spec())
    agent = containers(manifest)["agent"]
    home = [item for item in agent["env"] if item["name"] == "HOME"]
    assert home == [{"name": "HOME", "value": pod_placement.HOME_PATH}]
    mounts = {m["mountPath"]: m for m in agent["volumeMounts"]}
    assert mounts[pod_placement.HOME_PATH]["name"] == pod_placement.HOME_VOLUME
    assert "readOnly" not in mounts[pod_placement.HOME_PATH]
    assert volumes(manifest)[pod_placement.HOME_VOLUME] == {"name": "home", "emptyDir": {}}


def test_a_phase_that_sets_home_keeps_its_own() -> None:
    agent = containers(pod(spec(env=[{"name": "HOME", "value": "/tmp/home"}])))["agent"]
    assert [item for item in agent["env"] if item["name"] == "HOME"] == [
        {"name": "HOME", "value": "/tmp/home"}
    ]


def test_the_pod_shares_the_workspace_group_unless_told_otherwise() -> None:
    assert pod(spec())["spec"]["securityContext"]["fsGroup"] == pod_placement.WORKSPACE_GROUP
    own = spec(podSecurityContext={"fsGroup": 4000})
    assert pod(own)["spec"]["securityContext"]["fsGroup"] == 4000
    operator = pod_security.PodSecurity(pod=PodSecurityContext(fs_group=7000))
    assert pod(spec(), security=operator)["spec"]["securityContext"]["fsGroup"] == 7000


def test_the_fetcher_leaves_the_artifact_directories_setgid_and_group_writable() -> None:
    [script] = containers(pod(spec(), SIDECARS))[pods.FETCHER_CONTAINER]["command"][2:]
    assert f"chmod 2775 {in_pod.OUTPUT} {in_pod.INPUT}" in script
    assert script.index("mkdir -p") < script.index("chmod 2775")


def test_the_sidecars_get_the_operators_resources_and_the_agent_the_phases() -> None:
    sidecars = dataclasses.replace(SIDECARS, resources=SIDECAR_RESOURCES)
    phase = spec(resources={"limits": {"cpu": "2", "memory": "4Gi"}})
    by_name = containers(pod(phase, sidecars))
    expected = {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"cpu": "500m", "memory": "256Mi"},
    }
    assert by_name[pods.HARVESTER_CONTAINER]["resources"] == expected
    assert by_name[pods.FETCHER_CONTAINER]["resources"] == expected
    assert by_name["agent"]["resources"] == {"limits": {"cpu": "2", "memory": "4Gi"}}


def test_without_the_operators_resources_the_sidecars_have_none() -> None:
    by_name = containers(pod(spec(), SIDECARS))
    assert "resources" not in by_name[pods.HARVESTER_CONTAINER]
    assert "resources" not in by_name[pods.FETCHER_CONTAINER]


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    return parser.parse_args(list(flags))


def test_the_run_flags_give_the_sidecars_resources_and_the_pull_secrets() -> None:
    args = parse(
        "--sidecar-resources",
        '{"requests": {"cpu": "50m", "memory": "64Mi"}, '
        '"limits": {"cpu": "500m", "memory": "256Mi"}}',
        "--image-pull-secret",
        "a",
        "--image-pull-secret",
        "b",
    )
    assert args.sidecar_resources == SIDECAR_RESOURCES
    assert args.image_pull_secret == ["a", "b"]
    assert parse().sidecar_resources is None


def test_a_mistyped_sidecar_resources_flag_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--sidecar-resources", '{"limit": {"cpu": "1"}}')
    assert "not a ResourceRequirements" in capsys.readouterr().err


@pytest.mark.parametrize(
    "toleration",
    [{"key": "k", "operator": "Sometimes"}, {"key": "k", "effect": "NoRun"}],
)
def test_a_toleration_outside_the_apis_values_is_refused(toleration: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        spec(tolerations=[toleration])


def schema_rules(schema: dict[str, Any], *path: str) -> list[str]:
    for name in path:
        schema = schema["properties"][name] if name != "[]" else schema["items"]
    return [rule["message"] for rule in schema.get("x-kubernetes-validations", [])]


def test_the_schema_states_the_apis_rules_with_clear_messages() -> None:
    schema = structural_schema(ExecutionSpec)
    assert schema_rules(schema, "defaults", "tolerations", "[]") == [
        "a toleration with operator Exists takes no value",
        "a toleration without a key must use operator Exists",
        "tolerationSeconds needs effect NoExecute",
    ]
    assert schema_rules(schema, "phases", "[]", "workspace", "sizeLimit") == [
        "workspace.sizeLimit must be a positive size such as 10Gi"
    ]
    priority = schema["properties"]["phases"]["items"]["properties"]["priorityClassName"]
    assert priority["pattern"] == DNS_SUBDOMAIN


def test_r73_pod_labels_reach_the_pod_beside_the_operators_own_and_defaults_give_them() -> None:
    labelled = pod(spec(podLabels={"kueue.x-k8s.io/queue-name": "agents", "team": "a"}))
    labels = labelled["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "agents" and labels["team"] == "a"
    assert labels["agentjobs.io/phase"] == "demo-0-plan"
    assert "team" not in pod(spec())["metadata"]["labels"]
    execution = ExecutionSpec.model_validate(
        {
            "defaults": {"podLabels": {"team": "b"}},
            "phases": [
                {"name": "a", "image": "x", "prompt": "p"},
                {"name": "b", "image": "x", "prompt": "p", "podLabels": {"team": "c"}},
            ],
        }
    )
    merged = [
        phase_status.phase_spec(execution, execution_name="e", index=i).pod_labels for i in (0, 1)
    ]
    assert merged == [{"team": "b"}, {"team": "c"}]


def test_r73_pod_labels_may_not_set_the_operators_labels() -> None:
    schema = structural_schema(PhaseSpec)["properties"]["podLabels"]
    assert schema["maxProperties"] == 32
    [rule] = schema["x-kubernetes-validations"]
    assert "agentjobs.io/" in rule["rule"] and "managed-by" in rule["rule"]
