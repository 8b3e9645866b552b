"""The operator's kopf settings: pods are filtered by the API server, not in the operator."""

from __future__ import annotations

import kopf
from kopf._cogs.structs.references import Resource

from agentjobs.controllers import registration
from agentjobs.kube import naming

PODS = Resource("", "v1", "pods", kind="Pod", namespaced=True)
PHASES = Resource("agentjobs.io", "v1alpha1", "phases", kind="Phase", namespaced=True)


def test_the_pod_watch_asks_the_api_server_for_phase_pods_only() -> None:
    settings = kopf.OperatorSettings()
    registration.configure(settings)
    assert settings.watching.label_selectors.collect(PODS) == [naming.LABEL_PHASE]


def test_phases_and_executions_are_watched_without_a_selector() -> None:
    settings = kopf.OperatorSettings()
    registration.configure(settings)
    assert settings.watching.label_selectors.collect(PHASES) == []
