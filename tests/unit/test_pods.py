"""The phase pod, prompt ConfigMap and names the operator creates.

Cases: the agent container's prompt file, environment and workspace (the
timeout in test_agent_timeout.py); no service-account token unless asked;
the harvester as a native sidecar started before the input fetcher, which
waits for it; a failed sidecar's log tail as its status message (R61);
credentials only by Secret reference; deterministic names that fit in a label.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agentjobs.kube import naming, pod_security, pods, prompts
from agentjobs.models.output import HarvestLimits
from agentjobs.models.repositories import PhaseRepository
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import HandoffRef

OWNER = pods.Owner("agentjobs.io/v1alpha1", "Phase", "demo-0-plan", "uid-1")
SIDECARS = pods.Sidecars(
    image="ghcr.io/agentjobs/agentjobs:0.1.0",
    credentials_url="https://127.0.0.1:8443",
    credentials_secret="demo-0-plan-storage",
    bucket="b",
    attempt_root="ns/demo/0-plan/attempt-1",
    harvest_interval_seconds=10,
    inputs=HandoffRef(
        manifest="s3://b/ns/demo/0-draft/attempt-1/artifacts.json", sha256="ab" * 32, count=3
    ),
)


def spec(**fields: Any) -> PhaseSpec:
    return PhaseSpec.model_validate(
        {
            "executionName": "demo",
            "index": 0,
            "name": "plan",
            "image": "agent:1",
            "prompt": "Plan.",
            **fields,
        }
    )


def pod(
    phase: PhaseSpec,
    sidecars: pods.Sidecars | None = None,
    stopper: pods.Stopper | None = None,
    prompt: str | None = None,
) -> dict[str, Any]:
    return pods.phase_pod(
        phase,
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        attempt=1,
        sidecars=sidecars,
        security=pod_security.PodSecurity(),
        stopper=stopper,
        prompt=prompt,
    )


def agent(manifest: dict[str, Any]) -> dict[str, Any]:
    [container] = manifest["spec"]["containers"]
    assert container["name"] == "agent"
    return container


def test_the_agent_gets_its_prompt_as_a_file_named_by_an_env_var() -> None:
    container = agent(pod(spec()))
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert env["AGENTJOBS_PROMPT_FILE"] == "/etc/agentjobs/prompt/prompt.md"
    assert env["AGENTJOBS_OUTPUT_DIR"] == "/workspace/artifacts/output"
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/agentjobs/prompt"]["readOnly"] is True
    assert container["workingDir"] == "/workspace"


def test_the_prompt_is_followed_by_the_task_result_instruction() -> None:
    config_map = prompts.prompt_config_map(
        phase_resource="demo-0-plan",
        namespace="ns",
        owner=OWNER,
        prompt="Plan it.\n",
    )
    text = config_map["data"]["prompt.md"]
    assert text.startswith("Plan it.\n")
    assert "TASK_RESULT_END" in text
    assert text.index("Plan it.") < text.index("TASK_RESULT:")
    assert config_map["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_a_small_prompt_travels_in_the_pods_annotation_shown_as_the_prompt_file() -> None:
    composed = prompts.carried("Plan it.\n", None)
    assert composed == prompts.compose_prompt("Plan it.\n")
    manifest = pod(spec(), prompt=composed)
    assert manifest["metadata"]["annotations"][naming.ANNOTATION_PROMPT] == composed
    [volume] = [v for v in manifest["spec"]["volumes"] if v["name"] == pods.PROMPT_VOLUME]
    [item] = volume["downwardAPI"]["items"]
    assert item == {
        "path": "prompt.md",
        "fieldRef": {"fieldPath": "metadata.annotations['agentjobs.io/prompt']"},
    }


def test_a_prompt_past_16_kib_or_with_files_beside_it_needs_its_config_map() -> None:
    instruction = len(prompts.compose_prompt("").encode())
    fits = "x" * (prompts.INLINE_PROMPT_BYTES - instruction)
    assert prompts.carried(fits, None) is not None
    assert prompts.carried(fits + "x", None) is None
    assert prompts.carried("é" * (len(fits) // 2 + 1), None) is None  # counted in bytes
    assert prompts.carried("Revise.", {"feedback.md": "More tests."}) is None
    [volume] = [v for v in pod(spec())["spec"]["volumes"] if v["name"] == pods.PROMPT_VOLUME]
    assert volume == {"name": "prompt", "configMap": {"name": "demo-0-plan-prompt"}}
    assert "annotations" not in pod(spec())["metadata"]


def test_user_env_comes_after_the_operators_so_it_can_refer_to_it() -> None:
    container = agent(pod(spec(env=[{"name": "TOKEN", "value": "x"}])))
    assert [item["name"] for item in container["env"]][-1] == "TOKEN"


def test_no_service_account_token_is_mounted_unless_a_service_account_is_named() -> None:
    assert pod(spec())["spec"]["automountServiceAccountToken"] is False
    named = pod(spec(serviceAccountName="agent"))["spec"]
    assert (named["automountServiceAccountToken"], named["serviceAccountName"]) == (True, "agent")


def test_the_pod_never_restarts_its_agent_and_is_owned_by_the_phase() -> None:
    manifest = pod(spec())
    assert manifest["spec"]["restartPolicy"] == "Never"
    assert manifest["metadata"]["name"] == "demo-0-plan-a1"
    assert manifest["metadata"]["ownerReferences"][0]["controller"] is True
    assert manifest["metadata"]["labels"][naming.LABEL_PHASE] == "demo-0-plan"


def test_the_pod_is_kept_by_a_finalizer_until_its_run_is_recorded() -> None:
    assert pod(spec())["metadata"]["finalizers"] == [naming.POD_FINALIZER]


def test_without_storage_there_are_no_sidecars() -> None:
    assert "initContainers" not in pod(spec())["spec"]


def test_r28_the_harvester_is_a_native_sidecar_started_before_the_fetcher() -> None:
    init = pod(spec(), SIDECARS)["spec"]["initContainers"]
    assert [c["name"] for c in init] == ["harvester", "fetch-inputs"]
    harvester, fetcher = init
    assert harvester["restartPolicy"] == "Always"
    assert "restartPolicy" not in fetcher
    ready = harvester["args"][harvester["args"].index("--ready-file") + 1]
    assert fetcher["args"][fetcher["args"].index("--wait-for") + 1] == ready
    assert harvester["args"][harvester["args"].index("--root") + 1] == "ns/demo/0-plan/attempt-1"


def test_r61_a_failed_sidecar_leaves_its_log_tail_as_its_message() -> None:
    init = pod(spec(), SIDECARS)["spec"]["initContainers"]
    assert {c["terminationMessagePolicy"] for c in init} == {"FallbackToLogsOnError"}
    agent = pod(spec(), SIDECARS)["spec"]["containers"][0]
    assert "terminationMessagePolicy" not in agent  # the agent's log is read whole instead


def test_r35_the_fetcher_is_handed_the_manifest_and_its_hash_not_a_list() -> None:
    manifest = pod(spec(), SIDECARS)
    fetcher = manifest["spec"]["initContainers"][1]
    args = fetcher["args"]
    assert args[args.index("--inputs-manifest") + 1] == (
        "s3://b/ns/demo/0-draft/attempt-1/artifacts.json"
    )
    assert args[args.index("--inputs-sha256") + 1] == "ab" * 32
    config_map = prompts.prompt_config_map(
        phase_resource="demo-0-plan", namespace="ns", owner=OWNER, prompt="P"
    )
    assert list(config_map["data"]) == ["prompt.md"]


def test_the_harvester_is_given_the_operators_caps() -> None:
    limits = HarvestLimits(max_files=7, max_file_bytes=100, max_phase_bytes=1000)
    sidecars = dataclasses.replace(SIDECARS, harvest_limits=limits)
    args = pod(spec(), sidecars)["spec"]["initContainers"][0]["args"]
    caps = {flag: args[args.index(flag) + 1] for flag in ("--max-files", "--max-file-bytes")}
    assert caps == {"--max-files": "7", "--max-file-bytes": "100"}
    assert args[args.index("--max-phase-bytes") + 1] == "1000"


def test_with_nothing_to_fetch_the_workspace_is_prepared_without_python() -> None:
    first_phase = dataclasses.replace(SIDECARS, inputs=None)
    fetcher = pod(spec(), first_phase)["spec"]["initContainers"][1]
    assert fetcher["command"][:2] == ["sh", "-c"]
    assert "harvester-ready" in fetcher["command"][2]
    assert "/workspace/artifacts/output" in fetcher["command"][2]


def test_the_sidecars_get_a_token_by_secret_reference_and_no_storage_credential() -> None:
    manifest = pod(spec(), SIDECARS)
    for container in manifest["spec"]["initContainers"]:
        env = {item["name"]: item for item in container["env"]}
        assert sorted(env) == [
            "AGENTJOBS_CREDENTIALS_CA",
            "AGENTJOBS_CREDENTIALS_TOKEN",
            "AGENTJOBS_CREDENTIALS_URL",
        ]
        token = env["AGENTJOBS_CREDENTIALS_TOKEN"]
        assert "value" not in token
        assert token["valueFrom"]["secretKeyRef"] == {"name": "demo-0-plan-storage", "key": "token"}
        assert env["AGENTJOBS_CREDENTIALS_URL"]["value"] == "https://127.0.0.1:8443"
    assert "CREDENTIALS" not in str(agent(manifest)["env"])
    assert "AGENTJOBS_S3" not in str(manifest)


def test_the_secret_holds_the_token_and_ca_and_nothing_else() -> None:
    secret = pods.storage_secret(name="s", namespace="ns", owner=OWNER, token="t", ca="PEM")
    assert secret["stringData"] == {"token": "t", "ca.crt": "PEM"}
    assert secret["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_a_stop_secret_holds_the_stop_token_and_nothing_else() -> None:
    secret = pods.stop_secret(name="s", namespace="ns", owner=OWNER, token="t")
    assert secret["stringData"] == {"stop-token": "t"}
    assert secret["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_the_harvester_has_time_for_a_last_sync_through_an_outage() -> None:
    assert pod(spec(), SIDECARS)["spec"]["terminationGracePeriodSeconds"] >= 600


def test_names_are_deterministic_and_fit_in_a_label() -> None:
    long = naming.phase_resource("x" * 60, 3, "review")
    assert long == naming.phase_resource("x" * 60, 3, "review")
    assert len(naming.pod(long, 9)) <= 63
    assert len(naming.prompt_config_map(long)) <= 63
    uid = "0f8e4b9a-6c1d-4e2f-9a3b-5c7d8e9f0a1b"
    secret = naming.storage_secret(long, uid, 9)
    assert len(secret) <= 253 and secret != naming.storage_secret(long, uid[::-1], 9)
    assert secret != naming.storage_secret(long, uid, 8)  # each attempt its own token
    assert naming.phase_resource("demo", 0, "plan") == "demo-0-plan"
    assert naming.label_value("short") == "short"
    assert len(naming.label_value("y" * 100)) <= 63


def test_phase_pods_are_hardened_by_default() -> None:
    manifest = pod(spec(), SIDECARS)
    assert manifest["spec"]["securityContext"] == {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        "fsGroup": 65532,  # the workspace group (test_pod_placement.py)
    }
    for container in [agent(manifest), *manifest["spec"]["initContainers"]]:
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        }
    assert {"name": "tmp", "mountPath": "/tmp"} in agent(manifest)["volumeMounts"]


def test_a_phase_overrides_single_fields_of_the_hardening_but_not_for_the_sidecars() -> None:
    manifest = pod(
        spec(
            podSecurityContext={"runAsNonRoot": False, "runAsUser": 0},
            securityContext={"readOnlyRootFilesystem": False},
        ),
        SIDECARS,
    )
    assert manifest["spec"]["securityContext"] == {
        "runAsNonRoot": False,
        "runAsUser": 0,
        "seccompProfile": {"type": "RuntimeDefault"},
        "fsGroup": 65532,
    }
    assert agent(manifest)["securityContext"]["readOnlyRootFilesystem"] is False
    assert agent(manifest)["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    harvester = manifest["spec"]["initContainers"][0]
    assert harvester["securityContext"]["readOnlyRootFilesystem"] is True


REPOSITORIES = (
    PhaseRepository(
        name="service", url="https://g.example/s.git", branch="agentjobs/demo",
        credentials_secret="git-service",
    ),
    PhaseRepository(
        name="docs", url="https://g.example/d.git", branch="agentjobs/demo",
        credentials_secret="git-docs", agent_credentials=True,
    ),
    PhaseRepository(name="public", url="https://g.example/p.git", branch="agentjobs/demo"),
)  # fmt: skip


def test_r63_repository_credentials_reach_the_agent_only_where_agent_credentials_says() -> None:
    manifest = pod(spec(), dataclasses.replace(SIDECARS, repositories=REPOSITORIES))
    volumes = {v["name"]: v for v in manifest["spec"]["volumes"]}
    secrets = {v["secret"]["secretName"]: name for name, v in volumes.items() if "secret" in v}
    assert sorted(secrets) == ["git-docs", "git-service"]

    def mounted(container: dict[str, Any]) -> dict[str, str]:
        by_volume = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        return {secret: by_volume[v] for secret, v in secrets.items() if v in by_volume}

    init = {c["name"]: c for c in manifest["spec"]["initContainers"]}
    expected = {
        "git-service": "/var/run/agentjobs/git/service",
        "git-docs": "/var/run/agentjobs/git/docs",
    }
    assert mounted(init["fetch-inputs"]) == mounted(init["harvester"]) == expected
    assert mounted(agent(manifest)) == {"git-docs": "/var/run/agentjobs/git/docs"}
    # Where each checkout started is ours: the agent does not mount it.
    agent_volumes = {m["name"] for m in agent(manifest)["volumeMounts"]}
    assert "checkouts" not in agent_volumes
    assert "checkouts" in {m["name"] for m in init["harvester"]["volumeMounts"]}
    assert not any("git" in str(e).lower() for e in agent(manifest)["env"])


def test_r63_the_fetcher_is_handed_the_repositories_and_checks_them_out_in_python() -> None:
    sidecars = dataclasses.replace(SIDECARS, inputs=None, repositories=REPOSITORIES[:1])
    fetcher = next(
        c for c in pod(spec(), sidecars)["spec"]["initContainers"] if c["name"] == "fetch-inputs"
    )
    arguments = fetcher["args"]
    listed = json.loads(arguments[arguments.index("--repositories") + 1])
    assert [PhaseRepository.model_validate(r) for r in listed] == list(REPOSITORIES[:1])
    assert "command" not in fetcher


def test_r63_without_repositories_nothing_of_them_is_in_the_pod() -> None:
    manifest = pod(spec(), SIDECARS)
    names = {v["name"] for v in manifest["spec"]["volumes"]}
    assert "checkouts" not in names and not any(n.startswith("git-") for n in names)
