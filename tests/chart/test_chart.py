"""The Helm chart: lint, schema-valid output, values checked at install time, RBAC modes.

Fast: helm and the Kubernetes 1.35 JSON schemas shipped by `kubernetes-validate`, no
cluster. Cases: `helm lint --strict` is clean for each set of values; every rendered
object (CRDs included) validates against the Kubernetes 1.35 schemas; a typo'd key or a
wrong type fails both `helm template` and `helm lint`; the chart's generated files (CRD
templates, Argo CD patch) and manifests/install.yaml are not stale;
watching every namespace grants a ClusterRole only, listed namespaces a Role in each and
nothing cluster-wide; more than one replica elects a leader through a Lease it may create,
get and update in the release's namespace only, one replica is replaced without overlap
and has no Lease permission; nothing of kopf's peering is left; the operator runs hardened
by default; the S3 keys reach it from a Secret, the chart's or an existing one; phase pods
reach its credentials endpoint through the Service, allowed buckets and a TLS Secret reach
it as flags and a mount; the artifact and transcript caps reach it as flags; `edit` and
`view` may run and read Executions, never write Phases;
every
object carries the app.kubernetes.io labels; every value in values.yaml is commented
starting with its name; every object in values.schema.json forbids unknown keys, and its
security contexts accept every field Kubernetes 1.35 has.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from agentjobs.contract.limits import prices
from devcluster import manifests
from tests.chart.conftest import CHART, REPO, Render, run_helm, set_flags

KUBERNETES_VERSION = "1.35.0"
VALUE_SETS = {
    "defaults": {},
    "namespaced": {"watchNamespaces": "{team-a,team-b}"},
    "replicas": {"replicaCount": "2", "s3.accessKey": "a", "s3.secretKey": "b"},
    "replicas-namespaced": {"replicaCount": "3", "watchNamespaces": "{team-a}"},
    "everything": {
        "s3.endpoint": "https://s3.example.com",
        "s3.region": "eu-west-1",
        "s3.existingSecret": "keys",
        "imagePullSecrets[0].name": "registry",
        "serviceAccount.annotations.team": "ml",
        "podAnnotations.team": "ml",
        "nodeSelector.pool": "system",
        "tolerations[0].key": "dedicated",
        "tolerations[0].operator": "Exists",
        "phasePodSecurityContext.runAsUser": "1000",
        "phaseSecurityContext.readOnlyRootFilesystem": "false",
        "s3.allowedBuckets": "{team-*,shared}",
        "credentials.port": "9443",
        "credentials.tls.existingSecret": "credentials-tls",
    },
}


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def operator_args(objects: list[dict[str, Any]]) -> list[str]:
    (deployment,) = by_kind(objects, "Deployment")
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def operator_roles(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The (Cluster)Roles granted to the operator, not those aggregated into users' roles."""
    return [
        o
        for o in by_kind(objects, kind)
        if not any(k.startswith("rbac.authorization.k8s.io/aggregate-to-") for k in labels(o))
    ]


def labels(obj: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = obj["metadata"].get("labels") or {}
    return found


def resources_granted(role: dict[str, Any]) -> set[str]:
    return {resource for rule in role["rules"] for resource in rule["resources"]}


@pytest.mark.parametrize("name", VALUE_SETS)
def test_helm_lint_is_clean(helm: Path, name: str) -> None:
    result = run_helm(helm, "lint", "--strict", str(CHART), *set_flags(VALUE_SETS[name]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


@pytest.mark.parametrize("name", VALUE_SETS)
def test_every_rendered_object_is_valid_kubernetes_1_35(render: Render, name: str) -> None:
    objects = render(VALUE_SETS[name])
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize(
    ("flag", "complaint"),
    [
        ("replicaCont=2", "additional properties 'replicaCont' not allowed"),
        ("s3.endpont=http://minio:9000", "additional properties 'endpont' not allowed"),
        ("securityContext.runAsNonroot=true", "additional properties 'runAsNonroot'"),
        ("replicaCount=two", "/replicaCount"),
        ("rbac.create=yes", "/rbac/create"),
        ("image.pullPolicy=Sometimes", "/image/pullPolicy"),
        ("watchNamespaces[0]=Team_A", "/watchNamespaces/0"),
        ("s3.endpoint=minio:9000", "/s3/endpoint"),
    ],
)
def test_a_typo_or_a_wrong_type_in_values_fails_template_and_lint(
    helm: Path, flag: str, complaint: str
) -> None:
    for command in (["template", "agentjobs"], ["lint"]):
        result = run_helm(
            helm, *command, str(CHART), "--kube-version", KUBERNETES_VERSION, "--set", flag
        )
        assert result.returncode != 0, f"helm {command[0]} accepted {flag}"
        assert complaint in result.stdout + result.stderr


def test_the_charts_generated_files_are_current() -> None:
    expected = manifests.expected_files()
    assert {p.name for p in manifests.CRD_TEMPLATES.iterdir()} == {
        p.name for p in (REPO / "crds").glob("*.yaml")
    }
    for path, text in expected.items():
        assert path.read_text() == text, f"{path.relative_to(REPO)} is stale: make manifests"


def test_install_yaml_is_not_stale(helm: Path) -> None:
    assert manifests.OUTPUT.read_text() == manifests.render(helm), "run `make manifests`"


def test_watching_every_namespace_grants_a_cluster_role_and_nothing_namespaced(
    render: Render,
) -> None:
    objects = render()
    (role,) = operator_roles(objects, "ClusterRole")
    (binding,) = by_kind(objects, "ClusterRoleBinding")
    assert not by_kind(objects, "Role") and not by_kind(objects, "RoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "agentjobs", "namespace": "agentjobs-system"}
    ]
    assert not any(a.startswith("--namespace") for a in operator_args(objects))
    assert "namespaces" not in resources_granted(role)


def test_watching_listed_namespaces_grants_a_role_in_each_and_nothing_cluster_wide(
    render: Render,
) -> None:
    objects = render(VALUE_SETS["namespaced"])
    assert not operator_roles(objects, "ClusterRole") and not by_kind(objects, "ClusterRoleBinding")
    roles = by_kind(objects, "Role")
    bindings = by_kind(objects, "RoleBinding")
    assert {r["metadata"]["namespace"] for r in roles} == {"team-a", "team-b"}
    assert {b["metadata"]["namespace"] for b in bindings} == {"team-a", "team-b"}
    assert {"--namespace=team-a", "--namespace=team-b"} <= set(operator_args(objects))


def test_rbac_create_false_leaves_rbac_to_the_user(render: Render) -> None:
    objects = render({"rbac.create": "false", "serviceAccount.create": "false"})
    kinds = {o["kind"] for o in objects}
    assert kinds == {"Deployment", "Service", "CustomResourceDefinition"}
    (deployment,) = by_kind(objects, "Deployment")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "default"


LEASE_RULES = [
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": ["agentjobs"],
        "verbs": ["get", "update"],
    },
]


@pytest.mark.parametrize("name", ["replicas", "replicas-namespaced"])
def test_more_than_one_replica_elects_a_leader_through_a_lease_in_its_own_namespace(
    render: Render, name: str
) -> None:
    objects = render(VALUE_SETS[name])
    assert "--leader-election=agentjobs" in operator_args(objects)
    (deployment,) = by_kind(objects, "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    (pod_namespace,) = [e for e in env if e["name"] == "POD_NAMESPACE"]
    assert pod_namespace["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert "strategy" not in deployment["spec"]  # rolling: the new replica waits its turn
    (lease_role,) = [
        r for r in by_kind(objects, "Role") if r["metadata"]["name"].endswith("-leader-election")
    ]
    assert lease_role["metadata"]["namespace"] == "agentjobs-system"
    assert lease_role["rules"] == LEASE_RULES
    (binding,) = [
        b
        for b in by_kind(objects, "RoleBinding")
        if b["roleRef"]["name"] == lease_role["metadata"]["name"]
    ]
    assert binding["metadata"]["namespace"] == "agentjobs-system"
    others = operator_roles(objects, "ClusterRole") + by_kind(objects, "Role")
    others.remove(lease_role)
    assert all("leases" not in resources_granted(role) for role in others)


def test_one_replica_never_overlaps_with_its_successor(render: Render) -> None:
    objects = render()
    (deployment,) = by_kind(objects, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert not any(a.startswith("--leader-election") for a in operator_args(objects))
    assert not by_kind(objects, "Role")
    (role,) = operator_roles(objects, "ClusterRole")
    assert "leases" not in resources_granted(role)


@pytest.mark.parametrize("name", VALUE_SETS)
def test_nothing_of_kopfs_peering_is_left(render: Render, name: str) -> None:
    objects = render(VALUE_SETS[name])
    assert not [o for o in objects if o["apiVersion"].startswith("kopf.dev/")]
    assert not [o for o in objects if o["metadata"]["name"].endswith(".kopf.dev")]
    for role in by_kind(objects, "ClusterRole") + by_kind(objects, "Role"):
        assert all("kopf.dev" not in rule["apiGroups"] for rule in role["rules"])
    assert not any(a.startswith("--peering") for a in operator_args(objects))


def test_the_operator_runs_hardened_by_default(render: Render) -> None:
    (deployment,) = by_kind(render(), "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["AGENTJOBS_IMAGE"] == container["image"] == "ghcr.io/agentjobs/agentjobs:0.1.0"


def test_phase_pod_security_settings_reach_the_operator_as_json(render: Render) -> None:
    args = operator_args(render(VALUE_SETS["everything"]))
    assert '--pod-security-context={"runAsUser":1000}' in args
    assert '--security-context={"readOnlyRootFilesystem":false}' in args


def test_sidecar_resources_and_pull_secrets_reach_the_operators_phase_pods(
    render: Render,
) -> None:
    args = operator_args(render(VALUE_SETS["everything"]))
    assert "--image-pull-secret=registry" in args
    [flag] = [a for a in args if a.startswith("--sidecar-resources=")]
    assert json.loads(flag.removeprefix("--sidecar-resources=")) == {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"cpu": "500m", "memory": "512Mi"},
    }
    assert not any(a.startswith("--image-pull-secret") for a in operator_args(render()))


def test_artifact_caps_reach_the_harvester_through_the_operators_flags(render: Render) -> None:
    defaults = operator_args(render())
    assert "--max-files=10000" in defaults
    assert "--max-file-bytes=1073741824" in defaults
    assert "--max-phase-bytes=4294967296" in defaults
    args = operator_args(render({"maxArtifactFiles": "500", "maxArtifactBytesPerPhase": "5000"}))
    assert "--max-files=500" in args and "--max-phase-bytes=5000" in args


def test_r58_the_transcript_cap_reaches_the_operators_flag(render: Render) -> None:
    assert "--max-transcript-bytes=67108864" in operator_args(render())
    assert "--max-transcript-bytes=1048576" in operator_args(
        render({"maxTranscriptBytes": "1048576"})
    )


def _s3_env(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (deployment,) = by_kind(objects, "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    return {e["name"]: e.get("value") or e.get("valueFrom") for e in env}


def test_s3_keys_reach_the_operator_from_the_charts_secret(render: Render) -> None:
    objects = render({"s3.endpoint": "http://minio.minio:9000", **VALUE_SETS["replicas"]})
    (secret,) = by_kind(objects, "Secret")
    assert set(secret["data"]) == {"accessKey", "secretKey"}
    env = _s3_env(objects)
    assert env["AGENTJOBS_S3_ENDPOINT"] == "http://minio.minio:9000"
    assert env["AGENTJOBS_S3_ACCESS_KEY"] == {
        "secretKeyRef": {"name": secret["metadata"]["name"], "key": "accessKey"}
    }
    assert env["AGENTJOBS_S3_SECRET_KEY"]["secretKeyRef"]["key"] == "secretKey"


def test_s3_keys_reach_the_operator_from_an_existing_secret(render: Render) -> None:
    objects = render(VALUE_SETS["everything"])
    assert not by_kind(objects, "Secret")
    env = _s3_env(objects)
    assert env["AGENTJOBS_S3_ACCESS_KEY"]["secretKeyRef"]["name"] == "keys"
    assert env["AGENTJOBS_S3_REGION"] == "eu-west-1"


def test_phase_pods_reach_the_credentials_endpoint_through_the_service(render: Render) -> None:
    objects = render()
    (service,) = by_kind(objects, "Service")
    (deployment,) = by_kind(objects, "Deployment")
    pod = deployment["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    port = next(p for p in service["spec"]["ports"] if p["name"] == "credentials")
    assert port["port"] == 8443 and port["targetPort"] == "credentials"
    ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
    assert ports["credentials"] == 8443
    args = operator_args(objects)
    assert "--credentials-listen=0.0.0.0:8443" in args
    url = f"https://{service['metadata']['name']}.agentjobs-system.svc:8443"
    assert f"--credentials-url={url}" in args
    assert not any(a.startswith(("--credentials-tls", "--allowed-bucket")) for a in args)


def test_allowed_buckets_and_a_tls_secret_reach_the_operator(render: Render) -> None:
    objects = render(VALUE_SETS["everything"])
    args = operator_args(objects)
    assert {"--allowed-bucket=team-*", "--allowed-bucket=shared"} <= set(args)
    assert "--credentials-listen=0.0.0.0:9443" in args
    assert "--credentials-tls-cert=/etc/agentjobs/tls/tls.crt" in args
    (deployment,) = by_kind(objects, "Deployment")
    spec = deployment["spec"]["template"]["spec"]
    mounts = {m["name"]: m for m in spec["containers"][0]["volumeMounts"]}
    assert mounts["credentials-tls"] == {
        "name": "credentials-tls",
        "mountPath": "/etc/agentjobs/tls",
        "readOnly": True,
    }
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["credentials-tls"]["secret"] == {"secretName": "credentials-tls"}


def test_edit_and_view_may_run_and_read_executions_but_never_write_phases(
    render: Render,
) -> None:
    objects = render()
    aggregated = {
        key: role
        for role in by_kind(objects, "ClusterRole")
        for key in labels(role)
        if key.startswith("rbac.authorization.k8s.io/aggregate-to-")
    }
    assert set(aggregated) == {
        f"rbac.authorization.k8s.io/aggregate-to-{name}" for name in ("edit", "admin", "view")
    }
    edit = aggregated["rbac.authorization.k8s.io/aggregate-to-edit"]
    granted = {
        (resource, verb)
        for rule in edit["rules"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert ("executions", "create") in granted and ("executions", "delete") in granted
    assert ("phases", "get") in granted
    assert not {verb for resource, verb in granted if resource.startswith("phases")} - {
        "get",
        "list",
        "watch",
    }
    assert ("cronexecutions", "create") in granted
    assert resources_granted(edit) <= {
        "executions", "executions/status", "executions/artifacts", "phases", "phases/status",
        "cronexecutions", "cronexecutions/status", "executionqueues",
    }  # fmt: skip
    off = render({"rbac.aggregateToDefaultRoles": "false"})
    assert len(by_kind(off, "ClusterRole")) == 1  # the operator's own only


def test_every_object_carries_the_standard_labels(render: Render) -> None:
    for obj in render(VALUE_SETS["replicas-namespaced"]):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/name"] == "agentjobs", obj["kind"]
        assert labels["app.kubernetes.io/instance"] == "agentjobs"
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/version"] == "0.1.0"


def _leaf_paths(node: Any, prefix: str = "") -> list[str]:
    if isinstance(node, dict) and node:
        return [p for key, value in node.items() for p in _leaf_paths(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def test_every_value_is_commented_starting_with_its_name() -> None:
    text = (CHART / "values.yaml").read_text()
    values = yaml.safe_load(text)
    comments = re.findall(r"^\s*# ([A-Za-z0-9.]+) -- ", text, flags=re.MULTILINE)
    documented = set(comments)
    for path in _leaf_paths(values):
        # A value that is a Kubernetes object (resources, podSecurityContext) is commented once.
        prefixes = {".".join(path.split(".")[:n]) for n in range(1, path.count(".") + 2)}
        assert prefixes & documented, f"values.yaml: `{path}` has no `# {path} -- ...` comment"


def _object_schemas(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [found for item in node for found in _object_schemas(item)]
    if not isinstance(node, dict):
        return []
    found = [node] if "properties" in node else []
    return found + [s for value in node.values() for s in _object_schemas(value)]


def test_every_object_in_the_values_schema_forbids_unknown_keys() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    objects = _object_schemas(schema)
    assert len(objects) > 10
    for found in objects:
        assert found.get("additionalProperties") is False, sorted(found["properties"])


@pytest.mark.parametrize(
    ("definition", "kubernetes"),
    [("podSecurityContext", "PodSecurityContext"), ("securityContext", "SecurityContext")],
)
def test_the_security_context_schemas_accept_every_kubernetes_field(
    definition: str, kubernetes: str
) -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    ours = set(schema["definitions"][definition]["properties"])
    shipped = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    definitions = json.loads((shipped / "v1.35.0-local" / "_definitions.json").read_text())
    theirs = set(definitions["$defs"][f"io.k8s.api.core.v1.{kubernetes}"]["properties"])
    assert ours == theirs


def test_a_price_table_reaches_the_operator_as_a_file_it_can_read(render: Render) -> None:
    objects = render(
        {},
        "--set-string", "priceTable.models.gemini-2\\.5-pro.input=1.25",
        "--set-string", "priceTable.models.gemini-2\\.5-pro.output=10",
    )  # fmt: skip
    [config] = [
        o for o in by_kind(objects, "ConfigMap") if o["metadata"]["name"].endswith("price-table")
    ]
    table = prices.parse(config["data"]["prices.yaml"])
    assert table.models["gemini-2.5-pro"].output == "10"
    assert "--price-table=/etc/agentjobs/price-table/prices.yaml" in operator_args(objects)
    [deployment] = by_kind(objects, "Deployment")
    pod = deployment["spec"]["template"]
    assert "checksum/price-table" in pod["metadata"]["annotations"]
    [volume] = [v for v in pod["spec"]["volumes"] if v["name"] == "price-table"]
    assert volume["configMap"]["name"] == config["metadata"]["name"]


def test_without_prices_there_is_no_table(render: Render) -> None:
    objects = render()
    assert not [o for o in by_kind(objects, "ConfigMap") if "price" in o["metadata"]["name"]]
    assert not [a for a in operator_args(objects) if a.startswith("--price-table")]


def test_a_price_that_is_not_a_decimal_is_refused(helm: Path) -> None:
    result = run_helm(
        helm, "template", "agentjobs", str(CHART), "--kube-version", "1.35.0",
        "--set-string", "priceTable.models.m.input=cheap",
        "--set-string", "priceTable.models.m.output=1",
    )  # fmt: skip
    assert result.returncode != 0
    assert "priceTable/models/m/input" in result.stderr
