"""Where a phase's pod may run and how its image is pulled: the Kubernetes types an
Execution embeds for that, typed so that the API server refuses a typo when the
Execution is applied (not only when its pod is created, phases later).

The rules the Pod API enforces on these fields and that a schema can state are
stated here, as CEL with the API's own wording, so a wrong toleration never
reaches a pod that admission would refuse mid-execution.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentjobs.models.kubernetes import KubernetesModel, LabelName, SubdomainName, cel_rules

# PriorityClass and RuntimeClass names.
ClassName = SubdomainName


class ImagePullSecret(KubernetesModel):
    """A Secret in the Execution's namespace for pulling the agent's image."""

    name: SubdomainName


class Toleration(KubernetesModel):
    """A taint the phase's pod tolerates."""

    model_config = KubernetesModel.model_config | {
        "json_schema_extra": cel_rules(
            (
                "!has(self.operator) || self.operator != 'Exists' || !has(self.value)"
                " || self.value == ''",
                "a toleration with operator Exists takes no value",
            ),
            (
                "has(self.key) && self.key != ''"
                " || has(self.operator) && self.operator == 'Exists'",
                "a toleration without a key must use operator Exists",
            ),
            (
                "!has(self.tolerationSeconds) || has(self.effect) && self.effect == 'NoExecute'",
                "tolerationSeconds needs effect NoExecute",
            ),
        )
    }

    key: str | None = None
    operator: Literal["Exists", "Equal"] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None


class NodeSelectorRequirement(KubernetesModel):
    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] | None = None


class NodeSelectorTerm(KubernetesModel):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(KubernetesModel):
    node_selector_terms: list[NodeSelectorTerm] = Field(min_length=1)


class PreferredSchedulingTerm(KubernetesModel):
    weight: int = Field(ge=1, le=100)
    preference: NodeSelectorTerm


class NodeAffinity(KubernetesModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = (
        None
    )


class LabelSelectorRequirement(KubernetesModel):
    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(KubernetesModel):
    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class PodAffinityTerm(KubernetesModel):
    label_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    namespaces: list[LabelName] | None = None
    topology_key: str = Field(min_length=1)
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(KubernetesModel):
    weight: int = Field(ge=1, le=100)
    pod_affinity_term: PodAffinityTerm


class PodAffinity(KubernetesModel):
    """Pod affinity or anti-affinity: the same shape."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = (
        None
    )


class Affinity(KubernetesModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Workspace(KubernetesModel):
    """The phase's ``/workspace`` volume (an emptyDir)."""

    size_limit: str | None = Field(
        default=None,
        max_length=64,
        json_schema_extra=cel_rules(
            (
                "isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",
                "workspace.sizeLimit must be a positive size such as 10Gi",
            )
        ),
    )
