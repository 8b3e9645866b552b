"""The pod (and storage Secret) of one phase attempt, as Kubernetes JSON.

Decisions where the issue is silent: the agent runs in ``/workspace`` on an
``emptyDir`` volume; its prompt (the phase's prompt followed by the
TASK_RESULT instruction) is mounted read-only at ``/etc/agentjobs/prompt``
and named by ``AGENTJOBS_PROMPT_FILE``; the pod never restarts its agent
(a retry is a new attempt); and no service-account token is mounted unless
the phase names a service account, since an agent needs no access to the
Kubernetes API by default.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentjobs.kube import (
    agent_timeout,
    in_pod,
    naming,
    pod_placement,
    pod_repositories,
    pod_security,
)
from agentjobs.models.contract import TranscriptFormat
from agentjobs.models.kubernetes import ResourceRequirements, SecurityContext
from agentjobs.models.output import DEFAULT_HARVEST_LIMITS, HarvestLimits
from agentjobs.models.repositories import PhaseRepository
from agentjobs.models.resources import PhaseSpec
from agentjobs.models.storage import HandoffRef

AGENT_CONTAINER = "agent"
GRADER_CONTAINER = "grader"  # a grader pod's main container (R38)
WORKSPACE_VOLUME = "workspace"
PROMPT_VOLUME = "prompt"
TMP_VOLUME = "tmp"
# The harvester's own scratch space (R52: the shadow git directory and the patches it
# makes), mounted in no container the agent controls.
HARVESTER_TMP_VOLUME = "harvester-tmp"

# The sidecars' only storage setting: where to trade their token for presigned URLs.
ENV_CREDENTIALS_URL = "AGENTJOBS_CREDENTIALS_URL"
ENV_CREDENTIALS_TOKEN = "AGENTJOBS_CREDENTIALS_TOKEN"
ENV_CREDENTIALS_CA = "AGENTJOBS_CREDENTIALS_CA"
TOKEN_KEY = "token"
CA_KEY = "ca.crt"

HARVESTER_CONTAINER = "harvester"
FETCHER_CONTAINER = "fetch-inputs"
# The harvester's last sync is retried until storage answers; give it time before a SIGKILL.
STORAGE_GRACE_SECONDS = 3600


_PREPARE_WORKSPACE = (
    f"while [ ! -e {in_pod.HARVESTER_READY_FILE} ]; do sleep 0.05; done; "
    f"mkdir -p {in_pod.OUTPUT} {in_pod.INPUT} && "
    f"chmod {pod_placement.SHARED_DIRECTORY_MODE:o} {in_pod.OUTPUT} {in_pod.INPUT}"
)


@dataclass(frozen=True)
class Stopper:
    """R70: the phase has live limits, so its agent can be stopped at any moment; its
    timekeeper runs from this image (the operator's), with the stop token in ``secret``."""

    image: str
    secret: str
    resources: ResourceRequirements | None = None


@dataclass(frozen=True)
class Sidecars:
    """The containers added when artifacts are stored: an input fetcher and the harvester."""

    image: str
    credentials_url: str
    credentials_secret: str
    bucket: str
    attempt_root: str
    harvest_interval_seconds: float
    # R35: the previous phase's hand-off manifest, fetched before the agent starts.
    inputs: HandoffRef | None = None
    harvest_limits: HarvestLimits = DEFAULT_HARVEST_LIMITS
    # Requests and limits of each sidecar (a namespace's quota may require them).
    resources: ResourceRequirements | None = None
    # R42: the revised attempt's hand-off manifest (fetched into previous/) and the prompt
    # ConfigMap's key holding the evaluation (copied into feedback/).
    previous: HandoffRef | None = None
    feedback_key: str | None = None
    # R63: the repositories the fetcher checks out and the harvester hands on and pushes.
    repositories: tuple[PhaseRepository, ...] = ()


@dataclass(frozen=True)
class Owner:
    """The object that owns what is created, for garbage collection."""

    api_version: str
    kind: str
    name: str
    uid: str

    def reference(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }


def _labels(spec: PhaseSpec, phase_resource: str, attempt: int) -> dict[str, str]:
    return {
        **(spec.pod_labels or {}),  # the operator's own labels below win (CEL refuses them)
        **naming.MANAGED_BY,
        naming.LABEL_EXECUTION: naming.label_value(spec.execution_name),
        naming.LABEL_PHASE: phase_resource,
        naming.LABEL_ATTEMPT: str(attempt),
    }


def storage_secret(
    *, name: str, namespace: str, owner: Owner, token: str, ca: str
) -> dict[str, Any]:
    """One attempt's token for the credentials endpoint, and the CA that verifies the
    endpoint; no storage credential."""
    return _secret(name, namespace, owner, {TOKEN_KEY: token, CA_KEY: ca})


def stop_secret(*, name: str, namespace: str, owner: Owner, token: str) -> dict[str, Any]:
    """R70: the stop token of one stoppable attempt, for its timekeeper alone."""
    return _secret(name, namespace, owner, {agent_timeout.STOP_TOKEN_KEY: token})


def _secret(name: str, namespace: str, owner: Owner, data: dict[str, str]) -> dict[str, Any]:
    """A Secret of one attempt's, owned (and collected) with the Phase."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(naming.MANAGED_BY),
            "ownerReferences": [owner.reference()],
        },
        "type": "Opaque",
        "stringData": data,
    }


def _sidecar_containers(sidecars: Sidecars, security: SecurityContext) -> list[dict[str, Any]]:
    def credential(variable: str, key: str) -> dict[str, Any]:
        return {
            "name": variable,
            "valueFrom": {"secretKeyRef": {"name": sidecars.credentials_secret, "key": key}},
        }

    env = [
        {"name": ENV_CREDENTIALS_URL, "value": sidecars.credentials_url},
        credential(ENV_CREDENTIALS_TOKEN, TOKEN_KEY),
        credential(ENV_CREDENTIALS_CA, CA_KEY),
    ]
    mounts = [
        {"name": WORKSPACE_VOLUME, "mountPath": in_pod.WORKSPACE},
        {"name": PROMPT_VOLUME, "mountPath": in_pod.PROMPT_DIRECTORY, "readOnly": True},
        *pod_repositories.sidecar_mounts(sidecars.repositories),
    ]
    fetcher: dict[str, Any] = {
        "name": FETCHER_CONTAINER,
        "image": sidecars.image,
        "env": env,
        "volumeMounts": mounts,
        "securityContext": pod_security.as_json(security),
        **_resources(sidecars.resources),
        # R61: the kubelet gives a failed container's log tail as its status message.
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    fetched = _fetcher_arguments(sidecars)
    if fetched:
        fetcher["args"] = ["fetch-inputs", *fetched, "--wait-for", in_pod.HARVESTER_READY_FILE]
    else:
        # Nothing to fetch: a shell loop waits for the harvester, without starting Python.
        fetcher["command"] = ["sh", "-c", _PREPARE_WORKSPACE]
    harvester = {
        "name": HARVESTER_CONTAINER,
        "image": sidecars.image,
        "args": [
            "harvest",
            "--root",
            sidecars.attempt_root,
            "--bucket",
            sidecars.bucket,
            "--interval",
            f"{sidecars.harvest_interval_seconds:g}",
            "--max-files",
            str(sidecars.harvest_limits.max_files),
            "--max-file-bytes",
            str(sidecars.harvest_limits.max_file_bytes),
            "--max-phase-bytes",
            str(sidecars.harvest_limits.max_phase_bytes),
            "--ready-file",
            in_pod.HARVESTER_READY_FILE,
        ],
        "env": env,
        "volumeMounts": [*mounts, {"name": HARVESTER_TMP_VOLUME, "mountPath": "/tmp"}],
        "securityContext": pod_security.as_json(security),
        **_resources(sidecars.resources),
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "restartPolicy": "Always",  # a native sidecar: runs beside the agent, stops after it
    }
    return [harvester, fetcher]


def _fetcher_arguments(sidecars: Sidecars) -> list[str]:
    """What the fetcher brings into the workspace: the previous phase's artifacts (R35) and,
    for a revised attempt, its previous files and the evaluation (R42)."""
    arguments = []
    if sidecars.inputs is not None:
        arguments += ["--inputs-manifest", sidecars.inputs.manifest]
        arguments += ["--inputs-sha256", sidecars.inputs.sha256]
    if sidecars.previous is not None:
        arguments += ["--previous-manifest", sidecars.previous.manifest]
        arguments += ["--previous-sha256", sidecars.previous.sha256]
    if sidecars.feedback_key is not None:
        arguments += ["--feedback", f"{in_pod.PROMPT_DIRECTORY}/{sidecars.feedback_key}"]
    if sidecars.repositories:
        listed = [
            r.model_dump(mode="json", by_alias=True, exclude_none=True)
            for r in sidecars.repositories
        ]
        arguments += ["--repositories", json.dumps(listed, separators=(",", ":"))]
    return arguments


def _resources(resources: ResourceRequirements | None) -> dict[str, Any]:
    if resources is None:
        return {}
    return {"resources": resources.model_dump(mode="json", by_alias=True, exclude_none=True)}


def _dump(items: list[Any] | None) -> list[dict[str, Any]]:
    return [item.model_dump(by_alias=True, exclude_none=True) for item in items or []]


def phase_pod(
    spec: PhaseSpec,
    *,
    phase_resource: str,
    namespace: str,
    owner: Owner,
    attempt: int,
    sidecars: Sidecars | None,
    security: pod_security.PodSecurity,
    pull_secrets: Sequence[str] = (),
    pod_name: str | None = None,
    config_map_name: str | None = None,
    container: str = AGENT_CONTAINER,
    stopper: Stopper | None = None,
    prompt: str | None = None,
) -> dict[str, Any]:
    """The pod that runs one attempt of a phase; ``pull_secrets`` are the operator's;
    ``stopper`` makes its agent stoppable by the operator (R70); ``prompt``, the composed
    prompt the pod carries itself (else its ConfigMap, ``config_map_name``, holds it).

    A grader (R38) runs in a pod built here too, from the spec its outcome gives
    (:mod:`agentjobs.contract.grading.grader`), named ``pod_name``, with its own ConfigMap,
    its main container named ``container``.
    """
    transcript_format = spec.transcript_format or TranscriptFormat.TEXT
    env = [
        {"name": "AGENTJOBS_PROMPT_FILE", "value": in_pod.PROMPT_FILE},
        {"name": "AGENTJOBS_OUTPUT_DIR", "value": in_pod.OUTPUT},
        {"name": "AGENTJOBS_EXECUTION", "value": spec.execution_name},
        {"name": "AGENTJOBS_PHASE", "value": spec.name},
        {"name": "AGENTJOBS_ATTEMPT", "value": str(attempt)},
        {"name": "AGENTJOBS_TRANSCRIPT_FORMAT", "value": transcript_format.value},
        *pod_placement.home_environment(spec),
        *_dump(spec.env),
    ]
    agent: dict[str, Any] = {
        "name": container,
        "image": spec.image,
        "env": env,
        "workingDir": in_pod.WORKSPACE,
        "volumeMounts": [
            {"name": WORKSPACE_VOLUME, "mountPath": in_pod.WORKSPACE},
            {"name": PROMPT_VOLUME, "mountPath": in_pod.PROMPT_DIRECTORY, "readOnly": True},
            # Writable scratch space under a read-only root filesystem.
            {"name": TMP_VOLUME, "mountPath": "/tmp"},
            {"name": pod_placement.HOME_VOLUME, "mountPath": pod_placement.HOME_PATH},
            *pod_repositories.agent_mounts(sidecars.repositories if sidecars else ()),
        ],
        "securityContext": pod_security.as_json(
            pod_security.merged(security.container, spec.security_context)
        ),
    }
    if spec.command is not None:
        agent["command"] = spec.command
    if spec.args is not None:
        agent["args"] = spec.args
    if spec.env_from:
        agent["envFrom"] = _dump(spec.env_from)
    if spec.resources is not None:
        agent["resources"] = spec.resources.model_dump(by_alias=True, exclude_none=True)
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [agent],
        "securityContext": pod_security.as_json(
            pod_placement.with_workspace_group(
                pod_security.merged(security.pod, spec.pod_security_context)
            )
        ),
        "volumes": [
            {"name": WORKSPACE_VOLUME, "emptyDir": pod_placement.workspace_empty_dir(spec)},
            {"name": TMP_VOLUME, "emptyDir": {}},
            {"name": pod_placement.HOME_VOLUME, "emptyDir": {}},
            _prompt_volume(prompt, config_map_name or naming.prompt_config_map(phase_resource)),
        ],
        "automountServiceAccountToken": spec.service_account_name is not None,
        **pod_placement.scheduling(spec, pull_secrets),
    }
    if spec.service_account_name is not None:
        pod_spec["serviceAccountName"] = spec.service_account_name
    if sidecars is not None:
        pod_spec["initContainers"] = _sidecar_containers(sidecars, security.container)
        pod_spec["volumes"].append({"name": HARVESTER_TMP_VOLUME, "emptyDir": {}})
        if sidecars.repositories:
            pod_spec["volumes"] += pod_repositories.volumes(sidecars.repositories)
        pod_spec["terminationGracePeriodSeconds"] = STORAGE_GRACE_SECONDS
    if spec.timeout_seconds is not None or stopper is not None:
        # Not activeDeadlineSeconds: it would give the agent the harvester's long grace.
        timekeeper = None
        keeper_from = stopper or sidecars
        if keeper_from is not None:
            timekeeper = {
                "image": keeper_from.image,
                "securityContext": pod_security.as_json(security.container),
                **_resources(keeper_from.resources),
            }
        agent_timeout.enforce(
            pod_spec,
            agent,
            spec.timeout_seconds,
            timekeeper=timekeeper,
            stop_secret=stopper.secret if stopper is not None else None,
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod_name or naming.pod(phase_resource, attempt),
            "namespace": namespace,
            "labels": _labels(spec, phase_resource, attempt),
            "ownerReferences": [owner.reference()],
            "finalizers": [naming.POD_FINALIZER],
            **({} if prompt is None else {"annotations": {naming.ANNOTATION_PROMPT: prompt}}),
        },
        "spec": pod_spec,
    }


def _prompt_volume(prompt: str | None, config_map_name: str) -> dict[str, Any]:
    """The prompt's files: the pod's own annotation, or its ConfigMap."""
    if prompt is None:
        return {"name": PROMPT_VOLUME, "configMap": {"name": config_map_name}}
    field = f"metadata.annotations['{naming.ANNOTATION_PROMPT}']"
    item = {"path": in_pod.PROMPT_KEY, "fieldRef": {"fieldPath": field}}
    return {"name": PROMPT_VOLUME, "downwardAPI": {"items": [item]}}
