"""Turning a container spec into a launch: image, environment, user, mounts."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .envvars import ContainerConfigError, ObjectSource, expand_command, resolve_environment
from .images import ImageSpec, container_argv
from .process import LaunchSpec
from .quantity import parse_quantity
from .volumes import container_mounts

Obj = dict[str, Any]
CLUSTER_MARKER = "AGENTJOBS_DEVCLUSTER"


@dataclass(frozen=True)
class Identity:
    uid: int | None
    gid: int | None
    groups: list[int]


def pod_label(pod: Obj) -> str:
    """How the kubelet names a pod in messages: name_namespace(uid)."""
    meta = pod["metadata"]
    return f"{meta['name']}_{meta['namespace']}({meta['uid']})"


def container_identity(pod: Obj, container: Obj, image: ImageSpec) -> Identity:
    """The uid/gid to run as; enforces runAsNonRoot like the kubelet."""
    pod_context = pod["spec"].get("securityContext") or {}
    context = container.get("securityContext") or {}

    def setting(key: str) -> Any:
        return context[key] if context.get(key) is not None else pod_context.get(key)

    run_as_user = setting("runAsUser")
    run_as_group = setting("runAsGroup")
    image_user, _, image_group = (image.user or "").partition(":")
    uid: int | None = int(run_as_user) if run_as_user is not None else None
    gid: int | None = int(run_as_group) if run_as_group is not None else None
    if uid is None and image_user:
        if not image_user.isdigit():
            if setting("runAsNonRoot"):
                raise ContainerConfigError(
                    f"container has runAsNonRoot and image has non-numeric user ({image_user}), "
                    f'cannot verify user is non-root (pod: "{pod_label(pod)}", '
                    f"container: {container['name']})"
                )
        else:
            uid = int(image_user)
    if gid is None and image_group.isdigit():
        gid = int(image_group)
    if setting("runAsNonRoot"):
        if run_as_user is not None and int(run_as_user) == 0:
            raise ContainerConfigError(
                f'container\'s runAsUser breaks non-root policy (pod: "{pod_label(pod)}", '
                f"container: {container['name']})"
            )
        if uid is None or uid == 0:
            raise ContainerConfigError(
                f"container has runAsNonRoot and image will run as root (pod: "
                f'"{pod_label(pod)}", container: {container["name"]})'
            )
    if uid is not None and gid is None:
        gid = 0
    groups = [int(g) for g in pod_context.get("supplementalGroups") or []]
    if pod_context.get("fsGroup") is not None:
        groups.append(int(pod_context["fsGroup"]))
    return Identity(uid=uid, gid=gid, groups=groups)


def exposed_paths(argv: list[str]) -> list[str]:
    """What a non-root container must reach on this host: the interpreter the image
    table's {bin} and {python} stand for, and the absolute paths in its command."""
    named = [a for a in argv if a.startswith("/") and os.path.exists(a)]
    return [sys.base_prefix, *named]


def memory_limit_bytes(container: Obj) -> int | None:
    limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    return int(parse_quantity(limit)) if limit is not None else None


def service_environment(api_host: str) -> dict[str, str]:
    """The `kubernetes` service variables, pointing at the API server directly

    (there is no kube-proxy here, so the service's cluster IP would not route)."""
    hostport = api_host.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    host, port = (host, port) if host else (hostport, "443")
    host = host.strip("[]")
    prefix = f"KUBERNETES_PORT_{port}_TCP"
    return {
        "KUBERNETES_SERVICE_HOST": host,
        "KUBERNETES_SERVICE_PORT": port,
        "KUBERNETES_SERVICE_PORT_HTTPS": port,
        "KUBERNETES_PORT": f"tcp://{host}:{port}",
        prefix: f"tcp://{host}:{port}",
        f"{prefix}_PROTO": "tcp",
        f"{prefix}_PORT": port,
        f"{prefix}_ADDR": host,
    }


async def build_launch(
    pod: Obj,
    container: Obj,
    image: ImageSpec,
    source: ObjectSource,
    volume_paths: Mapping[str, Path],
    host_ip: str,
    allocatable: Mapping[str, str],
    service_env: Mapping[str, str],
    *,
    pod_ip: str | None = None,
) -> LaunchSpec:
    """Everything needed to start the container; ContainerConfigError if not yet possible."""
    identity = container_identity(pod, container, image)
    hostname = pod["spec"].get("hostname") or pod["metadata"]["name"]
    kubelet_env = await resolve_environment(
        pod, container, source, service_env, pod_ip or host_ip, allocatable, host_ip=host_ip
    )
    env = {**dict(image.env), "HOSTNAME": hostname, **kubelet_env}
    # Marks the process as the devcluster's, so `devcluster down` can find strays.
    if os.environ.get(CLUSTER_MARKER):
        env.setdefault(CLUSTER_MARKER, os.environ[CLUSTER_MARKER])
    env.setdefault("HOME", "/root" if not identity.uid else "/")
    argv = expand_command(
        container_argv(image, container.get("command"), container.get("args")), kubelet_env
    )
    if not argv:
        raise ContainerConfigError("no command specified")
    return LaunchSpec(
        exposed=exposed_paths(argv) if identity.uid else [],
        argv=argv,
        env=env,
        working_dir=container.get("workingDir") or image.working_dir or "/",
        mounts=container_mounts(pod, container, volume_paths, kubelet_env),
        uid=identity.uid,
        gid=identity.gid,
        groups=identity.groups,
        # hostNetwork pods share the node's hostname, like the node's network.
        hostname=None if pod["spec"].get("hostNetwork") else hostname[:63],
    )
