"""R63 in a phase's pod: the volumes that carry repositories' credentials and checkouts.

Each repository's Secret is a volume mounted read-only at ``<GIT_CREDENTIALS>/<name>`` in
the fetcher (which clones) and the harvester (which pushes), and in the agent's container
only when ``agentCredentials`` says so: never an environment variable, which would show in
the pod's spec and in every child process's environment. Where each checkout started is
written to a volume the agent's container does not mount.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentjobs.kube import in_pod
from agentjobs.models.repositories import PhaseRepository

CHECKOUTS_VOLUME = "checkouts"
# Readable by the pod's group only (the fsGroup every container of the pod shares).
SECRET_MODE = 0o440


def _volume(index: int) -> str:
    return f"git-credentials-{index}"


def volumes(repositories: Sequence[PhaseRepository]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [{"name": CHECKOUTS_VOLUME, "emptyDir": {}}]
    for index, repository in enumerate(repositories):
        if repository.credentials_secret is not None:
            found.append(
                {
                    "name": _volume(index),
                    "secret": {
                        "secretName": repository.credentials_secret,
                        "defaultMode": SECRET_MODE,
                    },
                }
            )
    return found


def _credential_mounts(
    repositories: Sequence[PhaseRepository], *, agent: bool
) -> list[dict[str, Any]]:
    return [
        {
            "name": _volume(index),
            "mountPath": f"{in_pod.GIT_CREDENTIALS}/{repository.name}",
            "readOnly": True,
        }
        for index, repository in enumerate(repositories)
        if repository.credentials_secret is not None and (not agent or repository.agent_credentials)
    ]


def sidecar_mounts(repositories: Sequence[PhaseRepository]) -> list[dict[str, Any]]:
    """What the fetcher and the harvester mount: every credential, and the checkouts file."""
    if not repositories:
        return []
    checkouts = {"name": CHECKOUTS_VOLUME, "mountPath": in_pod.CHECKOUTS_DIRECTORY}
    return [checkouts, *_credential_mounts(repositories, agent=False)]


def agent_mounts(repositories: Sequence[PhaseRepository]) -> list[dict[str, Any]]:
    """The credentials an agent was given with ``agentCredentials: true``, and no others."""
    return _credential_mounts(repositories, agent=True)
