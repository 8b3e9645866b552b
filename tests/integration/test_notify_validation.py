"""The completion webhooks' API (R49, R51), enforced by the real API server.

Cases: a notify url with another scheme, a user or password, a #fragment,
a space or no host, no events, an unknown event, an includeOutcome that is
not a boolean, an unknown field or more than four targets is refused with
its own message and nothing is created; https and http urls are both
admitted (the operator's allow-list decides which it calls), with a query,
and stored as written; notify cannot be changed, added or removed once the
Execution exists; `status.notifications[]` is accepted whole.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from devcluster.testing import Kubectl

SECRET_REF = {"name": "hooks", "key": "signing"}


def execution(name: str, notify: list[dict[str, Any]] | None) -> Any:
    spec: dict[str, Any] = {
        "defaults": {"image": "busybox:1.36"},
        "phases": [{"name": "draft", "prompt": "Write the notes."}],
    }
    if notify is not None:
        spec["notify"] = notify
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": spec,
    }


def target(url: str = "https://hooks.example.com/agentjobs", **extra: Any) -> dict[str, Any]:
    return {"url": url, "secretRef": SECRET_REF, **extra}


def apply(kubectl: Kubectl, namespace: str, manifest: Any) -> Any:
    return kubectl.run("apply", "-n", namespace, "-f", "-", input=json.dumps(manifest), check=False)


@pytest.mark.parametrize(
    ("notify", "message"),
    [
        ([target("ftp://hooks.example.com/x")], "url must start with https://"),
        ([target("https://user:pw@hooks.example.com/x")], "no user or password"),
        ([target("https:///x")], "url must name a host"),
        ([target("https://hooks.example.com/x#part")], "url must not have a #fragment"),
        ([target("https://hooks.example.com/a b")], "url must not contain spaces"),
        ([target(events=[])], "events must name at least one of Finished, PhaseFinished"),
        ([target(events=["Started"])], 'Unsupported value: "Started"'),
        ([target(includeOutcome="yes")], "must be of type boolean"),
        ([target(retries=3)], 'unknown field "spec.notify[0].retries"'),
        ([{"url": "https://hooks.example.com/x"}], "secretRef: Required value"),
        ([target()] * 5, "must have at most 4 items"),
    ],
    ids=[
        "ftp",
        "user-and-password",
        "no-host",
        "fragment",
        "space",
        "no-events",
        "unknown-event",
        "include-outcome-string",
        "unknown-field",
        "no-secret-ref",
        "five-targets",
    ],
)
def test_r49_a_wrong_notify_is_refused_with_a_message_that_says_what_to_fix(
    kubectl: Kubectl, namespace: str, crds: None, notify: list[dict[str, Any]], message: str
) -> None:
    result = apply(kubectl, namespace, execution("wrong", notify))
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
    assert kubectl.json("get", "executions", "-n", namespace)["items"] == []


def test_r49_https_and_http_targets_are_stored_as_written(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    notify = [
        target("https://hooks.example.com/agentjobs?token=abc", events=["Finished"]),
        target(
            "http://receiver.tools.svc:8080/hook",
            events=["PhaseFinished", "Finished"],
            includeOutcome=True,
        ),
    ]
    result = apply(kubectl, namespace, execution("valid", notify))
    assert result.returncode == 0, result.stderr
    stored = kubectl.json("get", "execution", "valid", "-n", namespace)
    assert stored["spec"]["notify"] == notify


@pytest.mark.parametrize(
    "change",
    [
        '{"spec": {"notify": [{"url": "https://other.example.com/x",'
        ' "secretRef": {"name": "hooks", "key": "signing"}}]}}',
        '{"spec": {"notify": null}}',
    ],
    ids=["changed", "removed"],
)
def test_r51_notify_cannot_be_changed_once_the_execution_exists(
    kubectl: Kubectl, namespace: str, crds: None, change: str
) -> None:
    assert apply(kubectl, namespace, execution("fixed", [target()])).returncode == 0
    result = kubectl.run(
        "patch", "execution", "fixed", "-n", namespace, "--type=merge", "-p", change, check=False
    )
    assert result.returncode != 0
    assert "notify cannot be changed once the execution exists" in result.stderr, result.stderr
    stored = kubectl.json("get", "execution", "fixed", "-n", namespace)
    assert stored["spec"]["notify"] == [target()]


def test_r51_notify_cannot_be_added_once_the_execution_exists(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("later", None)).returncode == 0
    body = json.dumps({"spec": {"notify": [target()]}})
    result = kubectl.run(
        "patch", "execution", "later", "-n", namespace, "--type=merge", "-p", body, check=False
    )
    assert result.returncode != 0
    assert "notify cannot be changed once the execution exists" in result.stderr, result.stderr


def test_r51_the_delivery_record_is_accepted_whole(
    kubectl: Kubectl, namespace: str, crds: None
) -> None:
    assert apply(kubectl, namespace, execution("sent", [target()])).returncode == 0
    records = [
        {
            "notify": 0,
            "target": "hooks.example.com",
            "event": "PhaseFinished",
            "phase": "draft",
            "id": "uid-phase-draft-finished",
            "state": "Delivered",
            "attempts": 3,
            "firstAttemptAt": "2026-12-01T12:00:00Z",
            "deliveredAt": "2026-12-01T12:00:30Z",
        },
        {
            "notify": 0,
            "target": "hooks.example.com",
            "event": "Finished",
            "id": "uid-execution-finished",
            "state": "Pending",
            "attempts": 1,
            "lastError": "HTTP 503",
            "firstAttemptAt": "2026-12-01T12:01:00Z",
            "nextAttemptAt": "2026-12-01T12:01:10Z",
        },
    ]
    body = json.dumps({"status": {"status": "completed", "notifications": records}})
    result = kubectl.run(
        "patch",
        "execution",
        "sent",
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        body,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    stored = kubectl.json("get", "execution", "sent", "-n", namespace)["status"]
    assert stored["notifications"] == records
