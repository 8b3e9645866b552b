"""Container environment: `$(VAR)` expansion and `env`/`envFrom` resolution."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Protocol

from .quantity import divide_rounding_up, parse_quantity

Obj = dict[str, Any]


class ContainerConfigError(Exception):
    """The container cannot be configured yet: waiting CreateContainerConfigError."""


class ObjectSource(Protocol):
    """Reads secrets and config maps; returns None when the object does not exist."""

    async def get_secret(self, namespace: str, name: str) -> Obj | None: ...

    async def get_config_map(self, namespace: str, name: str) -> Obj | None: ...


def expand(text: str, lookup: Callable[[str], str | None]) -> str:
    """Expand `$(NAME)` like Kubernetes: `$$` escapes, unknown names stay verbatim."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
                continue
            name = text[i + 2 : close]
            value = lookup(name)
            out.append(value if value is not None else f"$({name})")
            i = close + 1
        else:
            out.append("$" + following)
            i += 2
    return "".join(out)


def _label_lines(mapping: Mapping[str, str]) -> str:
    """The downward API's format for whole label/annotation maps."""
    return "\n".join(f'{key}="{mapping[key]}"' for key in sorted(mapping))


def field_value(pod: Obj, field_path: str, pod_ip: str, host_ip: str | None = None) -> str:
    """The value of a downward-API `fieldRef` for this pod (`host_ip` defaults to `pod_ip`)."""
    meta = pod.get("metadata", {})
    spec = pod.get("spec", {})
    for prefix, key in (("metadata.labels", "labels"), ("metadata.annotations", "annotations")):
        if field_path == prefix:
            return _label_lines(meta.get(key) or {})
        if field_path.startswith(prefix + "['") and field_path.endswith("']"):
            return str((meta.get(key) or {}).get(field_path[len(prefix) + 2 : -2], ""))
    simple = {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": host_ip or pod_ip,
        "status.hostIPs": host_ip or pod_ip,
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
    }
    if field_path not in simple:
        raise ContainerConfigError(f"unsupported fieldRef fieldPath {field_path!r}")
    return str(simple[field_path])


def resource_value(
    pod: Obj, default_container: str, ref: Obj, node_allocatable: Mapping[str, str]
) -> str:
    """The value of a `resourceFieldRef`; unset limits fall back to node allocatable."""
    container_name = ref.get("containerName") or default_container
    containers = [
        *(pod["spec"].get("initContainers") or []),
        *(pod["spec"].get("containers") or []),
    ]
    found = [c for c in containers if c.get("name") == container_name]
    if not found:
        raise ContainerConfigError(f"container {container_name!r} not found in pod")
    resources = found[0].get("resources") or {}
    kind, _, resource = str(ref.get("resource", "")).partition(".")
    if kind not in ("limits", "requests") or not resource:
        raise ContainerConfigError(f"unsupported resource {ref.get('resource')!r}")
    raw = (resources.get(kind) or {}).get(resource)
    if raw is None and kind == "requests":
        raw = (resources.get("limits") or {}).get(resource)
    if raw is None and kind == "limits":
        raw = node_allocatable.get(resource)
    value = parse_quantity(raw) if raw is not None else Decimal(0)
    divisor = parse_quantity(ref.get("divisor") or "1")
    return str(divide_rounding_up(value, divisor))


def decode_secret_data(secret: Obj) -> dict[str, str]:
    """Secret `data` is base64; values are passed to processes as text."""
    decoded: dict[str, str] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            decoded[key] = base64.b64decode(value).decode("utf-8", "surrogateescape")
        except (binascii.Error, ValueError):
            decoded[key] = ""
    for key, value in (secret.get("stringData") or {}).items():
        decoded[key] = value
    return decoded


def config_map_data(config_map: Obj) -> dict[str, str]:
    data = dict(config_map.get("data") or {})
    for key, value in (config_map.get("binaryData") or {}).items():
        data.setdefault(key, base64.b64decode(value).decode("utf-8", "surrogateescape"))
    return data


async def _source_data(
    source: ObjectSource, namespace: str, kind: str, name: str
) -> dict[str, str] | None:
    if kind == "secret":
        secret = await source.get_secret(namespace, name)
        return None if secret is None else decode_secret_data(secret)
    config_map = await source.get_config_map(namespace, name)
    return None if config_map is None else config_map_data(config_map)


async def resolve_environment(
    pod: Obj,
    container: Obj,
    source: ObjectSource,
    base: Mapping[str, str],
    pod_ip: str,
    node_allocatable: Mapping[str, str],
    *,
    host_ip: str | None = None,
) -> dict[str, str]:
    """The kubelet's environment for a container (without the image's own env).

    `base` holds variables the runtime adds first (service links); `envFrom`
    comes next and `env` last, each value expanded against what precedes it.
    Raises ContainerConfigError with the kubelet's message on a missing source.
    """
    namespace = pod["metadata"]["namespace"]
    env: dict[str, str] = dict(base)
    cache: dict[tuple[str, str], dict[str, str] | None] = {}

    async def data_of(kind: str, name: str) -> dict[str, str] | None:
        if (kind, name) not in cache:
            cache[kind, name] = await _source_data(source, namespace, kind, name)
        return cache[kind, name]

    for env_from in container.get("envFrom") or []:
        for kind, key in (("secret", "secretRef"), ("configmap", "configMapRef")):
            ref = env_from.get(key)
            if ref is None:
                continue
            data = await data_of(kind, ref.get("name", ""))
            if data is None:
                if ref.get("optional"):
                    continue
                raise ContainerConfigError(f'{kind} "{ref.get("name", "")}" not found')
            prefix = env_from.get("prefix") or ""
            for name, value in data.items():
                env[prefix + name] = value

    for var in container.get("env") or []:
        name = var["name"]
        value_from = var.get("valueFrom")
        if value_from is None:
            env[name] = expand(var.get("value") or "", env.get)
            continue
        if "fieldRef" in value_from:
            env[name] = field_value(pod, value_from["fieldRef"]["fieldPath"], pod_ip, host_ip)
        elif "resourceFieldRef" in value_from:
            env[name] = resource_value(
                pod, container["name"], value_from["resourceFieldRef"], node_allocatable
            )
        else:
            for kind, key, title in (
                ("secret", "secretKeyRef", "Secret"),
                ("configmap", "configMapKeyRef", "ConfigMap"),
            ):
                ref = value_from.get(key)
                if ref is None:
                    continue
                optional = bool(ref.get("optional"))
                data = await data_of(kind, ref.get("name", ""))
                if data is None:
                    if optional:
                        break
                    raise ContainerConfigError(f'{kind} "{ref.get("name", "")}" not found')
                if ref.get("key") not in data:
                    if optional:
                        break
                    raise ContainerConfigError(
                        f"couldn't find key {ref.get('key')} in {title} "
                        f"{namespace}/{ref.get('name', '')}"
                    )
                env[name] = data[ref["key"]]
                break
    return env


def expand_command(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """`$(VAR)` in command and args refers to the container's environment."""
    return [expand(arg, env.get) for arg in argv]
