"""R49, R51: the notify models, as the operator reads what the API server admitted.

Cases: a target defaults to events [Finished] and includeOutcome false; an
Execution without notify has none; an unknown event or field is refused;
the delivery record round-trips in camelCase; the CRD carries the url rules
and the rule that notify cannot change (the real API server's refusals are
in tests/integration/test_notify_validation.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pydantic
import pytest
import yaml

from agentjobs.models.notifications import NotificationRecord, NotifyTarget
from agentjobs.models.resources import ExecutionSpec

CRDS = Path(__file__).parents[2] / "crds"
TARGET = {"url": "https://hooks.example.com/x", "secretRef": {"name": "hooks", "key": "k"}}


def test_r49_a_target_defaults_to_finished_without_the_outcome() -> None:
    target = NotifyTarget.model_validate(TARGET)
    assert target.events == ["Finished"]
    assert target.include_outcome is False


def test_r49_an_execution_without_notify_has_no_targets() -> None:
    spec = ExecutionSpec.model_validate({"phases": [{"name": "a", "prompt": "p", "image": "i"}]})
    assert spec.notify == []


@pytest.mark.parametrize(
    "changes", [{"events": ["Started"]}, {"events": []}, {"retries": 3}, {"secretRef": None}]
)
def test_r49_an_unknown_event_or_field_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        NotifyTarget.model_validate({**TARGET, **changes})


def test_r51_the_delivery_record_round_trips_in_camel_case() -> None:
    wire = {
        "notify": 1,
        "target": "hooks.example.com:8443",
        "event": "PhaseFinished",
        "phase": "draft",
        "id": "uid-phase-draft-finished",
        "state": "Pending",
        "attempts": 2,
        "lastError": "HTTP 503",
        "firstAttemptAt": "2026-12-01T12:00:00Z",
        "nextAttemptAt": "2026-12-01T12:00:30Z",
    }
    record = NotificationRecord.model_validate(wire)
    assert record.model_dump(mode="json", by_alias=True, exclude_none=True) == {
        **wire,
        "firstAttemptAt": "2026-12-01T12:00:00Z",
    }


def test_the_crd_carries_the_url_rules_and_the_rule_that_notify_cannot_change() -> None:
    crd = yaml.safe_load((CRDS / "executions.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    url = spec["properties"]["notify"]["items"]["properties"]["url"]
    messages = [rule["message"] for rule in url["x-kubernetes-validations"]]
    assert any("url must start with https://" in message for message in messages)
    assert any("no user or password" in message for message in messages)
    assert any(
        "notify cannot be changed" in rule["message"] for rule in spec["x-kubernetes-validations"]
    )
