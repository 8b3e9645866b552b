"""The few core Kubernetes types an Execution embeds, with the API's own field names.

They are typed here (rather than left as free-form objects) so that the CRD
schema is structural and the API server rejects a typo when it is applied.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.alias_generators import to_camel

_NUMBER = r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
QUANTITY_PATTERN = rf"^(\+|-)?{_NUMBER}(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?{_NUMBER}))?$"

Quantity = Annotated[
    int | str,
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
        }
    ),
]


class KubernetesModel(BaseModel):
    """A Kubernetes API type: camelCase names, unknown fields refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class KeySelector(KubernetesModel):
    """A key of a Secret or ConfigMap."""

    name: str = Field(min_length=1)
    key: str = Field(min_length=1)
    optional: bool | None = None


class ObjectFieldSelector(KubernetesModel):
    field_path: str
    api_version: str | None = None


class ResourceFieldSelector(KubernetesModel):
    resource: str
    container_name: str | None = None
    divisor: Quantity | None = None


class EnvVarSource(KubernetesModel):
    secret_key_ref: KeySelector | None = None
    config_map_key_ref: KeySelector | None = None
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None


class EnvVar(KubernetesModel):
    name: str = Field(min_length=1)
    value: str | None = None
    value_from: EnvVarSource | None = None


class LocalObjectReference(KubernetesModel):
    name: str = Field(min_length=1)
    optional: bool | None = None


class EnvFromSource(KubernetesModel):
    prefix: str | None = None
    config_map_ref: LocalObjectReference | None = None
    secret_ref: LocalObjectReference | None = None


class ResourceRequirements(KubernetesModel):
    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None


class SeccompProfile(KubernetesModel):
    type: Literal["RuntimeDefault", "Localhost", "Unconfined"]
    localhost_profile: str | None = None


class Capabilities(KubernetesModel):
    add: list[str] | None = None
    drop: list[str] | None = None


class PodSecurityContext(KubernetesModel):
    """The pod-level security settings a phase may set (a subset of Kubernetes')."""

    run_as_non_root: bool | None = None
    run_as_user: int | None = Field(default=None, ge=0)
    run_as_group: int | None = Field(default=None, ge=0)
    fs_group: int | None = Field(default=None, ge=0)
    supplemental_groups: list[int] | None = None
    seccomp_profile: SeccompProfile | None = None


class SecurityContext(KubernetesModel):
    """The container-level security settings a phase may set (a subset of Kubernetes')."""

    allow_privilege_escalation: bool | None = None
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    read_only_root_filesystem: bool | None = None
    run_as_non_root: bool | None = None
    run_as_user: int | None = Field(default=None, ge=0)
    run_as_group: int | None = Field(default=None, ge=0)
    seccomp_profile: SeccompProfile | None = None
