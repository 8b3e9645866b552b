"""How a phase's ``timeoutSeconds`` stops its agent, and how a pod shows that it did.

The kubelet has one per-container grace period: a liveness probe's
``terminationGracePeriodSeconds``. The agent gets a liveness probe that the kubelet
first runs ``timeoutSeconds`` after the agent started (``initialDelaySeconds``) and
that always fails, so the kubelet's own clock ends the agent, with a short grace,
whatever its image (no shell, no binary of ours in it) and under PodSecurity
``restricted``.

The kubelet honours that grace only while another regular container keeps running:
when the container that failed its probe was the pod's last running one and is not
restarted, it kills the whole pod with the pod's grace instead (computePodActions,
``keepCount == 0`` and then ``KillPod``, pkg/kubelet/kuberuntime/kuberuntime_manager.go).
So a pod whose harvester needs the long pod grace gets one more regular container,
the timekeeper: it holds the probe's port (so the agent cannot answer the probe), answers
the agent's readiness probe, a heartbeat the kubelet sends only while the agent runs, and
exits once that heartbeat stops or the kill has begun. The harvester, a native sidecar,
then gets the pod's grace for its last sync. A pod without a harvester needs none of this:
its grace is the agent's short one.

R70: a phase with live limits must be stoppable at any moment, by the operator, with the
same short grace. Its agent's liveness probe then runs every second from the start
(``STOP_PATH``), and the timekeeper (in every such pod) fails it once the pod carries the
``agentjobs.io/stop`` annotation, which the kubelet writes into a downward API file only
the timekeeper mounts, or once the timekeeper's own clock passes ``timeoutSeconds`` (it
starts after the agent, so never early). A startup probe holds the liveness probe back
until the timekeeper listens, so a slow start cannot kill the agent.

The kubelet takes about a second to write an annotation into that file, so the operator
first tells the timekeeper itself: a POST to ``STOP_PATH`` on the pod's IP, carrying the
attempt's stop token, which only the operator and the timekeeper know (a Secret per
attempt, read by the kubelet into the timekeeper's environment). The annotation stays what
a restarted operator finds, and the way that always works where the network does not
(a NetworkPolicy, a node the operator cannot reach).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentjobs.models.contract import FailureKind, SystemFailure

TIMEKEEPER_CONTAINER = "timekeeper"
TIMEKEEPER_PORT = 9479
# Answered 503 by the timekeeper; refused when nobody listens. Either way a failure.
TIMEOUT_PATH = "/agentjobs/timeout"
# Answered 200 by the timekeeper: the kubelet asks while the agent runs.
HEARTBEAT_PATH = "/agentjobs/agent-running"
# What an agent that ignores SIGTERM gets after its time is up, before SIGKILL.
STOP_GRACE_SECONDS = 2  # the least the kubelet gives (minimumGracePeriodInSeconds)
POD_IP_VARIABLE = "AGENTJOBS_POD_IP"
# R70: the operator's stop, in the pod's annotation, as the timekeeper reads it.
STOP_PATH = "/agentjobs/stop"
STOP_ANNOTATION = "agentjobs.io/stop"
STOP_VOLUME = "agentjobs-stop"
STOP_DIR = "/var/run/agentjobs/stop"
STOP_FILE = f"{STOP_DIR}/reason"
TIMEOUT_ARGUMENT = "--timeout-seconds"
STOP_TOKEN_VARIABLE = "AGENTJOBS_STOP_TOKEN"
STOP_TOKEN_KEY = "stop-token"
# Beyond the timekeeper's hold of a stop probe (under a second): only a probe that gets no
# answer at all fails by its timeout.
STOP_PROBE_TIMEOUT_SECONDS = 3
# How long the timekeeper may take to listen before the kubelet gives up on the agent.
STARTUP_FAILURES = 600


def _http_probe(path: str, **timing: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": path, "port": TIMEKEEPER_PORT},
        "periodSeconds": 1,
        "timeoutSeconds": 1,
        "failureThreshold": 1,
        **timing,
    }


def timeout_probe(timeout_seconds: int) -> dict[str, Any]:
    """The agent's liveness probe: first run at the deadline, and failing."""
    return _http_probe(
        TIMEOUT_PATH,
        initialDelaySeconds=timeout_seconds,
        terminationGracePeriodSeconds=STOP_GRACE_SECONDS,
    )


def heartbeat_probe() -> dict[str, Any]:
    """The agent's readiness probe, which tells the timekeeper the agent still runs.

    It starts once the timekeeper, started just after the agent, listens: an earlier
    probe would only add a failure event to every phase."""
    return _http_probe(HEARTBEAT_PATH, initialDelaySeconds=1)


def stop_probe() -> dict[str, Any]:
    """R70: the agent's liveness probe in a stoppable pod: every second, failing once the
    operator has asked for the stop or the timeout has passed. The timekeeper holds each
    one open for most of a second, so its timeout leaves room for a slow answer."""
    return {
        **_http_probe(STOP_PATH, terminationGracePeriodSeconds=STOP_GRACE_SECONDS),
        "timeoutSeconds": STOP_PROBE_TIMEOUT_SECONDS,
    }


def startup_probe() -> dict[str, Any]:
    """Holds the stop probe back until the timekeeper answers (a heartbeat too)."""
    return {**_http_probe(HEARTBEAT_PATH), "failureThreshold": STARTUP_FAILURES}


def timekeeper_container(
    base: dict[str, Any], *, stoppable_within: int | None = None, stop_secret: str | None = None
) -> dict[str, Any]:
    """The timekeeper, from the fields it shares with the sidecars (image, security
    context, resources); stoppable (``stop_secret``, its token's Secret) it reads the stop
    file, takes the operator's stop, and keeps the timeout (``stoppable_within``) itself."""
    args = ["timekeeper", "--port", str(TIMEKEEPER_PORT)]
    env: list[dict[str, Any]] = [
        {"name": POD_IP_VARIABLE, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    ]
    container: dict[str, Any] = {"name": TIMEKEEPER_CONTAINER, **base, "env": env}
    if stop_secret is not None:
        args += ["--stop-file", STOP_FILE]
        if stoppable_within is not None:
            args += [TIMEOUT_ARGUMENT, str(stoppable_within)]
        container["volumeMounts"] = [{"name": STOP_VOLUME, "mountPath": STOP_DIR, "readOnly": True}]
        token = {"secretKeyRef": {"name": stop_secret, "key": STOP_TOKEN_KEY}}
        env.append({"name": STOP_TOKEN_VARIABLE, "valueFrom": token})
    container["args"] = args
    return container


def _stop_volume() -> dict[str, Any]:
    field = f"metadata.annotations['{STOP_ANNOTATION}']"
    return {
        "name": STOP_VOLUME,
        "downwardAPI": {"items": [{"path": "reason", "fieldRef": {"fieldPath": field}}]},
    }


def enforce(
    pod_spec: dict[str, Any],
    agent: dict[str, Any],
    timeout_seconds: int | None,
    *,
    timekeeper: dict[str, Any] | None,
    stop_secret: str | None = None,
) -> None:
    """Add what stops ``agent`` at its timeout (and, given its stop token's Secret, when
    the operator asks, R70) to a pod spec built without it.

    ``timekeeper`` (see timekeeper_container) is given when a harvester needs the
    pod's long grace, and always when stoppable.
    """
    if stop_secret is not None:
        assert timekeeper is not None, "a stoppable pod needs its timekeeper"
        agent["startupProbe"] = startup_probe()
        agent["livenessProbe"] = stop_probe()
        agent["readinessProbe"] = heartbeat_probe()
        pod_spec["volumes"].append(_stop_volume())
        pod_spec["containers"].append(
            timekeeper_container(
                timekeeper, stoppable_within=timeout_seconds, stop_secret=stop_secret
            )
        )
        pod_spec.setdefault("terminationGracePeriodSeconds", STOP_GRACE_SECONDS)
        return
    assert timeout_seconds is not None
    agent["livenessProbe"] = timeout_probe(timeout_seconds)
    if timekeeper is None:
        pod_spec["terminationGracePeriodSeconds"] = STOP_GRACE_SECONDS
        return
    agent["readinessProbe"] = heartbeat_probe()
    pod_spec["containers"].append(timekeeper_container(timekeeper))


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None


def _agent_timeout(pod: dict[str, Any]) -> int | None:
    """The timeoutSeconds the agent's probe enforces (only the agent has that probe), or
    the timekeeper of a stoppable pod keeps."""
    for spec in pod.get("spec", {}).get("containers") or []:
        probe = spec.get("livenessProbe") or {}
        if (probe.get("httpGet") or {}).get("path") == TIMEOUT_PATH:
            return int(probe.get("initialDelaySeconds") or 0)
        args = spec.get("args") or []
        if spec.get("name") == TIMEKEEPER_CONTAINER and TIMEOUT_ARGUMENT in args[:-1]:
            value = args[args.index(TIMEOUT_ARGUMENT) + 1]
            return int(value) if str(value).isdigit() else None
    return None


def timed_out(
    pod: dict[str, Any], started_at: str | None, finished_at: str | None
) -> SystemFailure | None:
    """The agent ran for its whole ``timeoutSeconds``, so the kubelet stopped it.

    Pod times are kept to the second and the kubelet's kill comes at or after the
    deadline, so a killed agent always shows a run of at least ``timeoutSeconds``; one
    that ended by itself in the last second before its deadline reads the same.
    """
    limit = _agent_timeout(pod)
    started, finished = _time(started_at), _time(finished_at)
    if limit is None or started is None or finished is None:
        return None
    if (finished - started).total_seconds() < limit:
        return None
    return SystemFailure(
        kind=FailureKind.TIMEOUT,
        code="DeadlineExceeded",  # the terminal reason a pod deadline gave before
        message=f"the agent ran for its timeoutSeconds ({limit} s) and was stopped",
    )
