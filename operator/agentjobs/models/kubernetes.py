"""The few core Kubernetes types an Execution embeds, with the API's own field names.

They are typed here (rather than left as free-form objects) so that the CRD
schema is structural and the API server rejects a typo when it is applied.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.alias_generators import to_camel

# R53: the forms of object names (k8s.io/apimachinery/pkg/util/validation). ConfigMaps,
# Secrets, ServiceAccounts, Executions and the classes a pod names are DNS subdomains;
# namespaces and containers DNS labels.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


def cel_rules(*rules: tuple[str, str]) -> dict[str, Any]:
    """CEL rules (rule, message) as a schema's ``x-kubernetes-validations``."""
    return {"x-kubernetes-validations": [{"rule": r, "message": m} for r, m in rules]}


MAX_URL_LENGTH = 2048


def http_url_schema(allow_flag: str, *rules: tuple[str, str]) -> WithJsonSchema:
    """A URL string's schema: http(s) only (plain http where the operator's ``allow_flag``
    names the host), no spaces or control characters, and ``rules`` between the two."""
    return WithJsonSchema(
        {
            "type": "string",
            "maxLength": MAX_URL_LENGTH,
            **cel_rules(
                (
                    "self.startsWith('https://') || self.startsWith('http://')",
                    f"url must start with https:// (http:// only where the operator's "
                    f"{allow_flag} names it)",
                ),
                *rules,
                (
                    "!self.matches('[\\\\s\\\\x00-\\\\x1f\\\\x7f]')",
                    "url must not contain spaces or control characters: percent-encode them",
                ),
            ),
        }
    )


def _name(pattern: str, max_length: int) -> WithJsonSchema:
    return WithJsonSchema(
        {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": pattern}
    )


# Checked by the API server only, so that an object it admitted under an older schema still
# parses; whatever such a name is, it cannot change an API path (adapters/paths.py).
SubdomainName = Annotated[str, Field(min_length=1), _name(DNS_SUBDOMAIN, 253)]
LabelName = Annotated[str, Field(min_length=1), _name(DNS_LABEL, 63)]

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

    name: SubdomainName
    key: str = Field(min_length=1)
    optional: bool | None = None


class ObjectFieldSelector(KubernetesModel):
    field_path: str
    api_version: str | None = None


class ResourceFieldSelector(KubernetesModel):
    resource: str
    container_name: LabelName | None = None
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
    name: SubdomainName
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
