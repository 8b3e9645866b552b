"""Pod volumes as directories under the state dir, and each container's mounts."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from .envvars import (
    ContainerConfigError,
    ObjectSource,
    config_map_data,
    decode_secret_data,
    expand,
    field_value,
    resource_value,
)
from .process import Mount

Obj = dict[str, Any]

# The kubelet always mounts these read-only: their content is owned by the node.
READ_ONLY_TYPES = ("secret", "configMap", "downwardAPI", "projected")


class VolumeError(Exception):
    """A volume cannot be set up yet; the pod waits in ContainerCreating."""


class VolumeSource(ObjectSource, Protocol):
    async def request_token(
        self,
        namespace: str,
        service_account: str,
        audience: str | None,
        expiration_seconds: int,
        pod_name: str,
        pod_uid: str,
    ) -> str: ...


def _write_files(directory: Path, files: Mapping[str, tuple[str, int]]) -> None:
    """Replace the directory's content with `files` (relative path → text, mode)."""
    directory.mkdir(parents=True, exist_ok=True)
    for child in directory.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    for relative, (text, mode) in files.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8", "surrogateescape"))
        target.chmod(mode)


def _project_keys(
    data: Mapping[str, str],
    items: list[Obj] | None,
    default_mode: int,
    kind: str,
    name: str,
    optional: bool,
) -> dict[str, tuple[str, int]]:
    if not items:
        return {key: (value, default_mode) for key, value in data.items()}
    files: dict[str, tuple[str, int]] = {}
    for item in items:
        if item["key"] not in data:
            if optional:
                continue
            raise VolumeError(f"{kind} references non-existent {kind} key: {item['key']}")
        files[item["path"]] = (data[item["key"]], int(item.get("mode") or default_mode))
    return files


async def _keyed_files(
    source: VolumeSource, namespace: str, kind: str, ref: Obj, default_mode: int
) -> dict[str, tuple[str, int]]:
    name = ref.get("name") or ref.get("secretName") or ""
    optional = bool(ref.get("optional"))
    if kind == "secret":
        secret = await source.get_secret(namespace, name)
        data = None if secret is None else decode_secret_data(secret)
    else:
        config_map = await source.get_config_map(namespace, name)
        data = None if config_map is None else config_map_data(config_map)
    if data is None:
        if optional:
            return {}
        raise VolumeError(f'{kind} "{name}" not found')
    return _project_keys(data, ref.get("items"), default_mode, kind, name, optional)


def _downward_files(
    pod: Obj, items: list[Obj], default_mode: int, pod_ip: str, allocatable: Mapping[str, str]
) -> dict[str, tuple[str, int]]:
    files: dict[str, tuple[str, int]] = {}
    for item in items:
        try:
            if "fieldRef" in item:
                value = field_value(pod, item["fieldRef"]["fieldPath"], pod_ip)
            else:
                ref = item.get("resourceFieldRef") or {}
                value = resource_value(pod, str(ref.get("containerName", "")), ref, allocatable)
        except ContainerConfigError as error:
            raise VolumeError(str(error)) from error
        files[item["path"]] = (value, int(item.get("mode") or default_mode))
    return files


async def _projected_files(
    pod: Obj, projected: Obj, source: VolumeSource, pod_ip: str, allocatable: Mapping[str, str]
) -> dict[str, tuple[str, int]]:
    meta = pod["metadata"]
    mode = int(projected.get("defaultMode") or 0o644)
    files: dict[str, tuple[str, int]] = {}
    for item in projected.get("sources") or []:
        if "secret" in item:
            files.update(
                await _keyed_files(source, meta["namespace"], "secret", item["secret"], mode)
            )
        elif "configMap" in item:
            files.update(
                await _keyed_files(source, meta["namespace"], "configmap", item["configMap"], mode)
            )
        elif "downwardAPI" in item:
            files.update(
                _downward_files(
                    pod, item["downwardAPI"].get("items") or [], mode, pod_ip, allocatable
                )
            )
        elif "serviceAccountToken" in item:
            request = item["serviceAccountToken"]
            token = await source.request_token(
                meta["namespace"],
                pod["spec"].get("serviceAccountName") or "default",
                request.get("audience"),
                int(request.get("expirationSeconds") or 3600),
                meta["name"],
                meta["uid"],
            )
            files[request["path"]] = (token, mode if projected.get("defaultMode") else 0o600)
    return files


def apply_fs_group(directory: Path, gid: int, writable: bool) -> None:
    """Give the pod's fsGroup the volume, as the kubelet's SetVolumeOwnership does.

    Every entry joins the group; a writable volume's (an emptyDir's) files get group
    read-write and its directories group rwx, and every directory the setgid bit, so
    that what any container creates there joins the group too (pkg/volume/volume_linux.go
    changeFilePermission). Other volumes keep their modes but the setgid directories.
    """
    for path in [directory, *directory.rglob("*")]:
        with contextlib.suppress(OSError):
            if path.is_symlink():
                os.lchown(path, -1, gid)  # chmod would reach the link's target
                continue
            os.chown(path, -1, gid)
            mode = path.stat().st_mode
            if path.is_dir():
                path.chmod(mode | (0o2770 if writable else 0o2070))
            elif writable:
                path.chmod(mode | 0o660)


async def prepare_volumes(
    pod: Obj, source: VolumeSource, volumes_dir: Path, pod_ip: str, allocatable: Mapping[str, str]
) -> dict[str, Path]:
    """Create or refresh every volume of the pod; map volume name → host path."""
    meta = pod["metadata"]
    paths: dict[str, Path] = {}
    for volume in pod["spec"].get("volumes") or []:
        name = volume["name"]
        directory = volumes_dir / name
        try:
            if "emptyDir" in volume:
                directory.mkdir(parents=True, exist_ok=True)
                directory.chmod(0o777)  # any runAsUser may write, as on a kubelet
            elif "hostPath" in volume:
                host = Path(volume["hostPath"]["path"])
                if volume["hostPath"].get("type") in ("DirectoryOrCreate", None, ""):
                    with contextlib.suppress(OSError):
                        host.mkdir(parents=True, exist_ok=True)
                directory = host
            elif "secret" in volume or "configMap" in volume:
                kind = "secret" if "secret" in volume else "configmap"
                ref = volume.get("secret") or volume.get("configMap") or {}
                mode = int(ref.get("defaultMode") or 0o644)
                _write_files(
                    directory, await _keyed_files(source, meta["namespace"], kind, ref, mode)
                )
            elif "downwardAPI" in volume:
                downward = volume["downwardAPI"]
                _write_files(
                    directory,
                    _downward_files(
                        pod,
                        downward.get("items") or [],
                        int(downward.get("defaultMode") or 0o644),
                        pod_ip,
                        allocatable,
                    ),
                )
            elif "projected" in volume:
                _write_files(
                    directory,
                    await _projected_files(pod, volume["projected"], source, pod_ip, allocatable),
                )
            else:
                raise VolumeError("volume type is not supported by the devcluster node")
        except VolumeError as error:
            raise VolumeError(f'MountVolume.SetUp failed for volume "{name}" : {error}') from error
        fs_group = (pod["spec"].get("securityContext") or {}).get("fsGroup")
        if fs_group is not None and "hostPath" not in volume:
            apply_fs_group(directory, int(fs_group), writable="emptyDir" in volume)
        paths[name] = directory
    return paths


def container_mounts(
    pod: Obj, container: Obj, volume_paths: Mapping[str, Path], env: Mapping[str, str]
) -> list[Mount]:
    """Bind mounts for a container's volumeMounts (subPath and readOnly honoured)."""
    kinds = {
        v["name"]: next((k for k in v if k != "name"), "") for v in pod["spec"].get("volumes") or []
    }
    mounts: list[Mount] = []
    for volume_mount in container.get("volumeMounts") or []:
        name = volume_mount["name"]
        if name not in volume_paths:
            raise ContainerConfigError(
                f"cannot find volume {name!r} to mount into container {container['name']!r}"
            )
        source = volume_paths[name]
        sub_path = volume_mount.get("subPath") or ""
        if volume_mount.get("subPathExpr"):
            sub_path = expand(volume_mount["subPathExpr"], env.get)
        if sub_path:
            if sub_path.startswith("/") or ".." in Path(sub_path).parts:
                raise ContainerConfigError(f"invalid subPath {sub_path!r}")
            source = source / sub_path
            if not source.exists():
                source.mkdir(parents=True, exist_ok=True)
                os.chmod(source, 0o777)
        mounts.append(
            Mount(
                source=str(source),
                target=volume_mount["mountPath"],
                read_only=bool(volume_mount.get("readOnly")) or kinds.get(name) in READ_ONLY_TYPES,
                is_file=source.is_file(),
            )
        )
    return mounts
