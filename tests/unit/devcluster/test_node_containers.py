"""Container identity rules (runAsNonRoot) and the `kubernetes` service variables.

Also: the repository's image table gives the operator image its Dockerfile user, and a
non-root container is given the host paths it must reach.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from devcluster.node.containers import container_identity, exposed_paths, service_environment
from devcluster.node.envvars import ContainerConfigError
from devcluster.node.images import ImageSpec

Obj = dict[str, Any]
REPO_TABLE = Path(__file__).resolve().parents[3] / "devcluster" / "images.yaml"


def _pod(pod_context: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {"securityContext": pod_context or {}},
    }


def test_root_image_with_run_as_non_root_is_a_config_error() -> None:
    with pytest.raises(ContainerConfigError, match="runAsNonRoot and image will run as root"):
        container_identity(_pod({"runAsNonRoot": True}), {"name": "c"}, ImageSpec())


def test_explicit_root_user_breaks_non_root_policy() -> None:
    container = {"name": "c", "securityContext": {"runAsUser": 0, "runAsNonRoot": True}}
    with pytest.raises(ContainerConfigError, match="runAsUser breaks non-root policy"):
        container_identity(_pod(), container, ImageSpec())


def test_user_and_group_from_container_pod_and_image() -> None:
    identity = container_identity(
        _pod({"runAsUser": 1000, "runAsNonRoot": True, "fsGroup": 2000}),
        {"name": "c", "securityContext": {"runAsGroup": 3000}},
        ImageSpec(),
    )
    assert (identity.uid, identity.gid, identity.groups) == (1000, 3000, [2000])
    from_image = container_identity(
        _pod({"runAsNonRoot": True}), {"name": "c"}, ImageSpec(user="1001:1002")
    )
    assert (from_image.uid, from_image.gid) == (1001, 1002)
    assert container_identity(_pod(), {"name": "c"}, ImageSpec()).uid is None


def test_service_environment_points_at_the_api_server() -> None:
    env = service_environment("https://127.0.0.1:6443")
    assert (env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]) == ("127.0.0.1", "6443")
    assert env["KUBERNETES_PORT_6443_TCP_ADDR"] == "127.0.0.1"


def test_the_operator_image_passes_run_as_non_root_with_its_dockerfile_user() -> None:
    # verifyRunAsNonRoot (kuberuntime/security_context_others.go): a numeric non-zero image
    # user satisfies runAsNonRoot without any runAsUser in the pod.
    table = yaml.safe_load(REPO_TABLE.read_text())
    image = ImageSpec(user=table["images"]["ghcr.io/agentjobs/agentjobs"]["user"])
    identity = container_identity(_pod({"runAsNonRoot": True}), {"name": "c"}, image)
    assert (identity.uid, identity.gid) == (65532, 65532)


def test_a_named_image_user_cannot_be_verified_non_root_unless_run_as_user_is_set() -> None:
    image = ImageSpec(user="nobody")
    with pytest.raises(ContainerConfigError, match=r"non-numeric user \(nobody\)"):
        container_identity(_pod({"runAsNonRoot": True}), {"name": "c"}, image)
    context = {"runAsNonRoot": True, "runAsUser": 1000}
    assert container_identity(_pod(context), {"name": "c"}, image).uid == 1000


def test_a_non_root_container_is_given_the_interpreter_and_the_paths_it_names() -> None:
    exposed = exposed_paths(["/bin/sh", "/no/such/script.sh", "relative"])
    assert exposed == [sys.base_prefix, "/bin/sh"]
