"""What makes a phase pod fit the cluster it runs in: where it is scheduled, how its
images are pulled, and its volumes' limits and ownership.

Decisions where the issue is silent:

- The phase's ``imagePullSecrets`` come first, then the operator's own (its
  ``--image-pull-secret`` flags, the chart's ``imagePullSecrets``), which pull
  the sidecars' image; a name given twice is listed once. The kubelet tries
  each Secret and only warns about one missing from the namespace.
- ``workspace.sizeLimit`` caps the ``/workspace`` emptyDir only; ``/tmp`` and
  ``HOME`` are bounded, like any container's writes, by an
  ``ephemeral-storage`` limit in the phase's ``resources``.
- ``HOME`` is an emptyDir of its own (mode 0777, as the kubelet makes every
  emptyDir), so it is writable whatever user the image runs as and whether or
  not sidecars prepare the workspace; a phase that sets ``HOME`` in ``env``
  keeps its own.
- The pod gets ``fsGroup`` 65532 (the operator image's group) unless the
  operator's or the phase's pod security context names one. The kubelet then
  gives every volume that group with the setgid bit and adds it to every
  container's groups, so the directories the fetcher creates group-writable
  (``2775``) are writable by an agent of any uid, and what the agent writes
  (even ``0640``) stays readable by the harvester, without world-writable
  directories.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentjobs.models.kubernetes import PodSecurityContext
from agentjobs.models.resources import PhaseSpec

HOME_VOLUME = "home"
HOME_PATH = "/home/agentjobs"
# The group of the operator's image (its Dockerfile's USER 65532:65532).
WORKSPACE_GROUP = 65532
# setgid (files created inside join the directory's group) and group-writable.
SHARED_DIRECTORY_MODE = 0o2775


def scheduling(spec: PhaseSpec, operator_pull_secrets: Sequence[str]) -> dict[str, Any]:
    """The pod spec's placement and pull fields the phase (and the operator) set."""
    fields: dict[str, Any] = {}
    names = [secret.name for secret in spec.image_pull_secrets or []]
    names += [name for name in operator_pull_secrets if name not in names]
    if names:
        fields["imagePullSecrets"] = [{"name": name} for name in names]
    if spec.node_selector:
        fields["nodeSelector"] = dict(spec.node_selector)
    if spec.tolerations:
        fields["tolerations"] = [_json(toleration) for toleration in spec.tolerations]
    if spec.affinity is not None:
        fields["affinity"] = _json(spec.affinity)
    if spec.priority_class_name is not None:
        fields["priorityClassName"] = spec.priority_class_name
    if spec.runtime_class_name is not None:
        fields["runtimeClassName"] = spec.runtime_class_name
    return fields


def workspace_empty_dir(spec: PhaseSpec) -> dict[str, Any]:
    """The workspace volume's emptyDir, with the phase's size limit if any."""
    size_limit = spec.workspace.size_limit if spec.workspace is not None else None
    return {} if size_limit is None else {"sizeLimit": size_limit}


def with_workspace_group(context: PodSecurityContext) -> PodSecurityContext:
    """``context`` with the shared workspace group unless it names an fsGroup itself."""
    if context.fs_group is not None:
        return context
    return context.model_copy(update={"fs_group": WORKSPACE_GROUP})


def home_environment(spec: PhaseSpec) -> list[dict[str, str]]:
    """``HOME`` for the agent, unless the phase sets it."""
    if any(variable.name == "HOME" for variable in spec.env or []):
        return []
    return [{"name": "HOME", "value": HOME_PATH}]


def _json(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped
