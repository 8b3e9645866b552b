"""The process node against the real control plane, driven with the real kubectl."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from devcluster import components, processes, testing
from devcluster.layout import NODE_NAME
from devcluster.testing import DevCluster, Kubectl

pytestmark = pytest.mark.integration

Obj = dict[str, Any]


@pytest.fixture(autouse=True)
def _needs_node(local_cluster: DevCluster) -> None:
    if not local_cluster.has_node:
        pytest.skip("no Ready process node in this cluster")


def _pod(name: str, script: str, **spec: Any) -> Obj:
    container = {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 5,
            "containers": [container],
            **spec,
        },
    }


def _get(kubectl: Kubectl, namespace: str, name: str) -> Obj:
    result: Obj = kubectl.json("get", "pod", name, "-n", namespace)
    return result


def _wait(
    kubectl: Kubectl, namespace: str, name: str, check: Callable[[Obj], bool], timeout: float = 60
) -> Obj:
    deadline = time.monotonic() + timeout
    while True:
        pod = _get(kubectl, namespace, name)
        if check(pod):
            return pod
        assert time.monotonic() < deadline, json.dumps(pod.get("status"), indent=1)
        time.sleep(0.25)


def _phase(*phases: str) -> Callable[[Obj], bool]:
    return lambda pod: pod.get("status", {}).get("phase") in phases


def _main_status(pod: Obj, name: str = "main") -> Obj:
    statuses = [
        *pod["status"].get("containerStatuses", []),
        *pod["status"].get("initContainerStatuses", []),
    ]
    return next((s for s in statuses if s["name"] == name), {})


def _waiting_reason(reason: str) -> Callable[[Obj], bool]:
    return lambda pod: _main_status(pod).get("state", {}).get("waiting", {}).get("reason") == reason


def _raw_logs(cluster: DevCluster, *args: str) -> bytes:
    """kubectl logs as bytes: no newline translation, so byte-exactness is visible."""
    return subprocess.run(
        ["kubectl", "logs", *args],
        env={**os.environ, **cluster.env},
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout


def test_failed_pod_reports_exit_code_and_logs(kubectl: Kubectl, namespace: str) -> None:
    kubectl.apply(_pod("exit3", "echo line one; echo line two >&2; exit 3"), namespace)
    pod = _wait(kubectl, namespace, "exit3", _phase("Failed", "Succeeded"))
    assert pod["status"]["phase"] == "Failed"
    terminated = _main_status(pod)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert terminated["containerID"].startswith("process://")
    # Each pod its own loopback address (devcluster/node/network.py), the node's as hostIP.
    assert pod["status"]["hostIP"] == "127.0.0.1"
    assert pod["status"]["podIP"].startswith("127.") and pod["status"]["podIP"] != "127.0.0.1"
    conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert conditions["Ready"] == "False" and conditions["PodScheduled"] == "True"
    logs = kubectl.run("logs", "exit3", "-n", namespace).stdout
    assert logs == "line one\nline two\n"


def test_a_failed_containers_log_tail_is_its_message_when_its_policy_asks(
    kubectl: Kubectl, namespace: str
) -> None:
    script = "echo first; echo agentjobs: error: the last words >&2; exit 3"
    for name, policy, message in (
        ("fallback", "FallbackToLogsOnError", "first\nagentjobs: error: the last words\n"),
        ("file", "File", None),
    ):
        manifest = _pod(name, script, container={"terminationMessagePolicy": policy})
        kubectl.apply(manifest, namespace)
        pod = _wait(kubectl, namespace, name, _phase("Failed", "Succeeded"))
        assert _main_status(pod)["state"]["terminated"].get("message") == message, name


def test_logs_follow_streams_while_the_process_runs(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    script = "for i in 1 2 3 4 5 6 7 8; do echo tick-$i; sleep 0.5; done"
    kubectl.apply(_pod("ticker", script), namespace)
    _wait(kubectl, namespace, "ticker", _phase("Running", "Succeeded", "Failed"))
    with subprocess.Popen(
        ["kubectl", "logs", "-f", "ticker", "-n", namespace],
        env={**os.environ, **local_cluster.env},
        stdout=subprocess.PIPE,
    ) as follow:
        assert follow.stdout is not None
        try:
            first = follow.stdout.readline()
            assert first.startswith(b"tick-")
            state = _main_status(_get(kubectl, namespace, "ticker"))["state"]
            assert "running" in state, "the first line must arrive before the exit"
            rest = follow.stdout.read()
            assert follow.wait(timeout=30) == 0
        finally:
            follow.kill()
    lines = (first + rest).decode().splitlines()
    assert lines[-1] == "tick-8" and lines == [f"tick-{i}" for i in range(9 - len(lines), 9)]


def test_partial_lines_are_served_byte_exact(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    script = r"printf 'a\nno newline'; sleep 0.3; printf ' cont\r\n\ttab  '; printf end"
    kubectl.apply(_pod("partial", script), namespace)
    _wait(kubectl, namespace, "partial", _phase("Succeeded", "Failed"))
    expected = b"a\nno newline cont\r\n\ttab  end"
    assert _raw_logs(local_cluster, "partial", "-n", namespace) == expected
    timestamped = _raw_logs(local_cluster, "partial", "-n", namespace, "--timestamps")
    assert timestamped.count(b"Z ") >= 3 and timestamped.endswith(b"end")
    assert _raw_logs(local_cluster, "partial", "-n", namespace, "--limit-bytes=4") == b"a\nno"


def test_native_sidecar_gets_sigterm_after_main_exits(kubectl: Kubectl, namespace: str) -> None:
    sidecar = {
        "name": "sidecar",
        "image": "busybox",
        "restartPolicy": "Always",
        "command": [
            "sh",
            "-c",
            "trap 'echo got-term; exit 0' TERM; echo sidecar-up; while true; do sleep 0.1; done",
        ],
    }
    manifest = _pod("sidecar", "sleep 1; echo main-done", initContainers=[sidecar])
    kubectl.apply(manifest, namespace)
    pod = _wait(kubectl, namespace, "sidecar", _phase("Succeeded", "Failed"))
    assert pod["status"]["phase"] == "Succeeded"
    side = _main_status(pod, "sidecar")["state"]["terminated"]
    main = _main_status(pod, "main")["state"]["terminated"]
    assert side["exitCode"] == 0 and side["finishedAt"] >= main["finishedAt"]
    logs = kubectl.run("logs", "sidecar", "-c", "sidecar", "-n", namespace).stdout
    assert logs == "sidecar-up\ngot-term\n"


def test_active_deadline_fails_the_pod(kubectl: Kubectl, namespace: str) -> None:
    kubectl.apply(_pod("deadline", "sleep 60", activeDeadlineSeconds=2), namespace)
    pod = _wait(kubectl, namespace, "deadline", _phase("Failed", "Succeeded"), timeout=30)
    assert pod["status"]["reason"] == "DeadlineExceeded"
    assert "deadline" in pod["status"]["message"]
    assert "terminated" in _main_status(pod)["state"]


STUBBORN = "trap '' TERM; echo up; while true; do sleep 1; done"
# Nothing listens there: refused, a failure from the first run at 1 s on.
FAILING_LIVENESS = {
    "tcpSocket": {"port": 9},
    "initialDelaySeconds": 1,
    "periodSeconds": 1,
    "failureThreshold": 1,
    "terminationGracePeriodSeconds": 2,
}


def _ran_seconds(pod: Obj, name: str) -> float:
    ended = _main_status(pod, name)["state"]["terminated"]
    started, finished = (
        datetime.fromisoformat(ended[key].replace("Z", "+00:00"))
        for key in ("startedAt", "finishedAt")
    )
    return (finished - started).total_seconds()


def _terminated(name: str) -> Callable[[Obj], bool]:
    return lambda pod: "terminated" in _main_status(pod, name).get("state", {})


def test_a_failed_liveness_probe_kills_the_container_alone_with_the_probes_grace(
    kubectl: Kubectl, namespace: str
) -> None:
    manifest = _pod(
        "probed",
        STUBBORN,
        terminationGracePeriodSeconds=20,
        container={"livenessProbe": FAILING_LIVENESS},
    )
    manifest["spec"]["containers"].append(
        {"name": "other", "image": "busybox", "command": ["sh", "-c", "sleep 30"]}
    )
    kubectl.apply(manifest, namespace)
    pod = _wait(kubectl, namespace, "probed", _terminated("main"), timeout=30)
    ended = _main_status(pod)["state"]["terminated"]
    assert (ended["exitCode"], ended["reason"]) == (137, "Error")
    assert _ran_seconds(pod, "main") <= 1 + 1 + 2 + 1  # not the pod's 20 s
    assert "running" in _main_status(pod, "other")["state"]  # kept, not restarted
    assert pod["status"]["phase"] == "Running"
    events = kubectl.json("get", "events", "-n", namespace)["items"]
    messages = {(e["reason"], e["message"]) for e in events}
    assert ("Killing", "Container main failed liveness probe") in messages
    assert any(r == "Unhealthy" and m.startswith("Liveness probe failed: ") for r, m in messages)


def test_a_failed_liveness_probe_of_the_last_container_kills_the_pod_with_the_pods_grace(
    kubectl: Kubectl, namespace: str
) -> None:
    manifest = _pod(
        "lone",
        STUBBORN,
        terminationGracePeriodSeconds=6,
        container={"livenessProbe": FAILING_LIVENESS},
    )
    kubectl.apply(manifest, namespace)
    pod = _wait(kubectl, namespace, "lone", _phase("Failed", "Succeeded"), timeout=30)
    assert pod["status"]["phase"] == "Failed"
    assert _main_status(pod)["state"]["terminated"]["exitCode"] == 137
    assert _ran_seconds(pod, "main") >= 1 + 6  # the kubelet's KillPod: the probe's 2 s unused


def test_readiness_follows_the_probe(kubectl: Kubectl, namespace: str) -> None:
    probe = {"tcpSocket": {"port": 9}, "periodSeconds": 1, "failureThreshold": 1}
    kubectl.apply(_pod("unready", "sleep 30", container={"readinessProbe": probe}), namespace)
    pod = _wait(kubectl, namespace, "unready", _phase("Running"), timeout=30)
    time.sleep(2)
    pod = _get(kubectl, namespace, "unready")
    assert _main_status(pod)["ready"] is False and "running" in _main_status(pod)["state"]
    conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert conditions["Ready"] == "False"


def test_unknown_image_waits_in_image_pull_backoff(kubectl: Kubectl, namespace: str) -> None:
    manifest = _pod("noimage", "true", container={"image": "example.invalid/nope:1"})
    kubectl.apply(manifest, namespace)
    pod = _wait(kubectl, namespace, "noimage", _waiting_reason("ImagePullBackOff"), timeout=30)
    assert pod["status"]["phase"] == "Pending"


def test_missing_secret_is_a_config_error_until_created(kubectl: Kubectl, namespace: str) -> None:
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "later", "key": "token"}}}]
    kubectl.apply(_pod("needs-secret", 'echo "token=$TOKEN"', container={"env": env}), namespace)
    pod = _wait(
        kubectl,
        namespace,
        "needs-secret",
        _waiting_reason("CreateContainerConfigError"),
        timeout=30,
    )
    assert _main_status(pod)["state"]["waiting"]["message"] == 'secret "later" not found'
    kubectl.run(
        "create", "secret", "generic", "later", "--from-literal=token=s3cr3t", "-n", namespace
    )
    _wait(kubectl, namespace, "needs-secret", _phase("Succeeded"), timeout=30)
    assert kubectl.run("logs", "needs-secret", "-n", namespace).stdout == "token=s3cr3t\n"


def _memory_cgroup_writable() -> bool:
    probe = Path(f"/sys/fs/cgroup/memory/agentjobs-probe-{os.getpid()}")
    try:
        probe.mkdir()
        (probe / "memory.limit_in_bytes").write_text(str(64 << 20))
        return True
    except OSError:
        return False
    finally:
        if probe.exists():
            probe.rmdir()


def test_memory_limit_gives_oom_killed(kubectl: Kubectl, namespace: str) -> None:
    if not _memory_cgroup_writable():
        pytest.skip("the cgroup v1 memory controller is not writable here")
    script = "python3 -c 'x = bytearray(512 * 1024 * 1024); print(len(x))'"
    resources = {"limits": {"memory": "64Mi"}}
    kubectl.apply(_pod("oom", script, container={"resources": resources}), namespace)
    pod = _wait(kubectl, namespace, "oom", _phase("Failed", "Succeeded"))
    terminated = _main_status(pod)["state"]["terminated"]
    assert (terminated["reason"], terminated["exitCode"]) == ("OOMKilled", 137)


def test_deletion_sends_sigterm_and_removes_the_pod(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    tmp_path.chmod(0o777)
    script = (
        "trap 'echo got-term > /out/marker; exit 0' TERM; echo up > /out/started; "
        "while true; do sleep 0.1; done"
    )
    manifest = _pod(
        "doomed",
        script,
        container={"volumeMounts": [{"name": "out", "mountPath": "/out"}]},
        volumes=[{"name": "out", "hostPath": {"path": str(tmp_path)}}],
    )
    kubectl.apply(manifest, namespace)
    _wait(kubectl, namespace, "doomed", lambda _: (tmp_path / "started").exists())
    kubectl.run("delete", "pod", "doomed", "-n", namespace, "--wait=true", timeout=60)
    assert (tmp_path / "marker").read_text() == "got-term\n"
    gone = kubectl.run("get", "pod", "doomed", "-n", namespace, check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_init_containers_volumes_and_downward_api(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "configmap", "settings", "--from-literal=greeting=hello", "-n", namespace)
    init = {
        "name": "prepare",
        "image": "busybox",
        "command": ["sh", "-c", "echo prepared > /work/state"],
        "volumeMounts": [{"name": "work", "mountPath": "/work"}],
    }
    script = (
        "cat /work/state; cat /config/greeting; echo; cat /info/name; echo; "
        "echo ns=$MY_NS; test -s /var/run/secrets/kubernetes.io/serviceaccount/token "
        "&& echo token-ok; pwd"
    )
    container = {
        "workingDir": "/work",
        "env": [{"name": "MY_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "volumeMounts": [
            {"name": "work", "mountPath": "/work"},
            {"name": "config", "mountPath": "/config", "readOnly": True},
            {"name": "info", "mountPath": "/info"},
        ],
    }
    volumes = [
        {"name": "work", "emptyDir": {}},
        {"name": "config", "configMap": {"name": "settings"}},
        {
            "name": "info",
            "downwardAPI": {
                "items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]
            },
        },
    ]
    kubectl.apply(
        _pod("initpod", script, initContainers=[init], container=container, volumes=volumes),
        namespace,
    )
    pod = _wait(kubectl, namespace, "initpod", _phase("Succeeded", "Failed"))
    logs = kubectl.run("logs", "initpod", "-n", namespace).stdout
    assert pod["status"]["phase"] == "Succeeded", logs
    assert logs == f"prepared\nhello\ninitpod\nns={namespace}\ntoken-ok\n/work\n"


@pytest.mark.slow
def test_on_failure_restarts_and_keeps_previous_logs(kubectl: Kubectl, namespace: str) -> None:
    script = (
        "if [ -f /data/flag ]; then echo second; exit 0; fi; touch /data/flag; echo first; exit 1"
    )
    container = {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    kubectl.apply(
        _pod(
            "retry",
            script,
            restartPolicy="OnFailure",
            container=container,
            volumes=[{"name": "data", "emptyDir": {}}],
        ),
        namespace,
    )
    pod = _wait(kubectl, namespace, "retry", _phase("Succeeded", "Failed"), timeout=60)
    status = _main_status(pod)
    assert pod["status"]["phase"] == "Succeeded" and status["restartCount"] == 1
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert kubectl.run("logs", "retry", "-n", namespace).stdout == "second\n"
    assert kubectl.run("logs", "retry", "-n", namespace, "--previous").stdout == "first\n"


def _watch_until_deleted(
    cluster: DevCluster, kubectl: Kubectl, namespace: str, name: str, act: Callable[[], None]
) -> list[Obj]:
    """Every version of the pod from now until it is deleted, in order, while `act` runs."""
    version = _get(kubectl, namespace, name)["metadata"]["resourceVersion"]
    path = (
        f"/api/v1/namespaces/{namespace}/pods?watch=1&resourceVersion={version}"
        f"&fieldSelector=metadata.name%3D{name}&timeoutSeconds=60"
    )
    with subprocess.Popen(
        ["kubectl", "get", "--raw", path], env={**os.environ, **cluster.env}, stdout=subprocess.PIPE
    ) as watch:
        assert watch.stdout is not None
        try:
            act()
            versions = []
            for line in watch.stdout:
                event = json.loads(line)
                versions.append(event["object"])
                if event["type"] == "DELETED":
                    return versions
        finally:
            watch.kill()
    raise AssertionError(f"pod {name} was not deleted within the watch")


def _state(pod: Obj, name: str) -> Obj:
    state: Obj = _main_status(pod, name).get("state", {})
    return state


def test_deletion_writes_every_exit_before_removing_the_pod(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    loop = "while true; do sleep 0.1; done"
    scripts = {
        "clean": f"trap 'exit 0' TERM; {loop}",
        "term": loop,
        "stubborn": f"trap '' TERM; {loop}",
    }
    containers = [
        {"name": n, "image": "busybox", "command": ["sh", "-c", script]}
        for n, script in scripts.items()
    ]
    manifest = _pod("graceful", "", terminationGracePeriodSeconds=3)
    manifest["spec"]["containers"] = containers
    kubectl.apply(manifest, namespace)
    _wait(kubectl, namespace, "graceful", _phase("Running"))
    delete = ["delete", "pod", "graceful", "-n", namespace, "--wait=false"]
    versions = _watch_until_deleted(
        local_cluster, kubectl, namespace, "graceful", lambda: kubectl.run(*delete)
    )
    names = ("clean", "term", "stubborn")
    for version in versions:  # never a terminal phase next to a container still running
        if version["status"].get("phase") in ("Succeeded", "Failed"):
            assert all("terminated" in _state(version, n) for n in names), version["status"]
    final = versions[-2]  # the last update before the kubelet's own delete
    assert final["metadata"]["deletionTimestamp"] and final["status"]["phase"] == "Failed"
    codes = {n: _state(final, n)["terminated"]["exitCode"] for n in names}
    assert codes == {"clean": 0, "term": 143, "stubborn": 137}
    assert versions[-1]["metadata"]["deletionGracePeriodSeconds"] == 0


def test_eviction_fails_the_pod_with_a_disruption_target(kubectl: Kubectl, namespace: str) -> None:
    kubectl.apply(_pod("evictee", "echo up; exec sleep 60", restartPolicy="Always"), namespace)
    _wait(kubectl, namespace, "evictee", _phase("Running"))
    testing.evict_pod(namespace, "evictee", message="The node was low on resource: memory. ")
    pod = _wait(kubectl, namespace, "evictee", _phase("Failed", "Succeeded"), timeout=30)
    assert (pod["status"]["reason"], pod["status"]["phase"]) == ("Evicted", "Failed")
    assert pod["status"]["message"] == "The node was low on resource: memory. "
    target = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert (target["status"], target["reason"]) == ("True", "TerminationByKubelet")
    main = _main_status(pod)
    assert main["state"]["terminated"]["exitCode"] == 143 and main["restartCount"] == 0


def test_logs_rotate_at_the_max_size_and_follow_goes_on_in_the_new_file(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    testing.set_container_log_max_size(namespace, "rotor", 4096)
    lines = [f"line-{i}-" + "x" * 80 for i in range(100)]
    # The burst waits for the follower, so that it sees the file before the rotation.
    script = (
        "echo ready; while [ ! -f /sync/go ]; do sleep 0.1; done; "
        'echo "$BURST"; sleep 4; echo tail-marker; sleep 1'
    )
    container = {
        "env": [{"name": "BURST", "value": "\n".join(lines)}],
        "volumeMounts": [{"name": "sync", "mountPath": "/sync"}],
    }
    volumes = [{"name": "sync", "hostPath": {"path": str(tmp_path)}}]
    kubectl.apply(_pod("rotor", script, container=container, volumes=volumes), namespace)
    _wait(kubectl, namespace, "rotor", _phase("Running"))
    with subprocess.Popen(
        ["kubectl", "logs", "-f", "rotor", "-n", namespace],
        env={**os.environ, **local_cluster.env},
        stdout=subprocess.PIPE,
    ) as follow:
        assert follow.stdout is not None
        try:
            assert follow.stdout.readline() == b"ready\n"
            (tmp_path / "go").touch()
            followed = follow.stdout.read().decode()
            assert follow.wait(timeout=30) == 0
        finally:
            follow.kill()
    assert followed == "\n".join([*lines, "tail-marker"]) + "\n"
    pod = _wait(kubectl, namespace, "rotor", _phase("Succeeded"))
    current = kubectl.run("logs", "rotor", "-n", namespace).stdout
    assert current.endswith("tail-marker\n") and "ready" not in current
    logs = local_cluster.layout.node_state / "pods" / pod["metadata"]["uid"] / "logs" / "main"
    assert [p.name for p in logs.iterdir() if p.name.startswith("0.log.")]


def test_an_idle_follow_stream_is_closed_after_the_idle_timeout(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    testing.set_stream_idle_timeout(namespace, "quiet", 1.5)
    kubectl.apply(_pod("quiet", "echo hello; exec sleep 60"), namespace)
    _wait(kubectl, namespace, "quiet", _phase("Running"))
    started = time.monotonic()
    follow = subprocess.run(
        ["kubectl", "logs", "-f", "quiet", "-n", namespace],
        env={**os.environ, **local_cluster.env},
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert follow.stdout == b"hello\n" and time.monotonic() - started < 20
    assert "running" in _main_status(_get(kubectl, namespace, "quiet"))["state"]


def test_log_drops_cut_the_next_follow_streams_then_stop(
    local_cluster: DevCluster, kubectl: Kubectl, namespace: str
) -> None:
    testing.drop_log_streams(namespace, "dropper", "main", after_bytes=10, times=2)
    kubectl.apply(_pod("dropper", "echo 0123456789abcdef; echo second-line"), namespace)
    _wait(kubectl, namespace, "dropper", _phase("Succeeded"))
    follow = ["kubectl", "logs", "-f", "dropper", "-n", namespace]
    env = {**os.environ, **local_cluster.env}
    outputs = [
        subprocess.run(follow, env=env, capture_output=True, timeout=30, check=False).stdout
        for _ in range(3)
    ]
    assert outputs == [b"0123456789", b"0123456789", b"0123456789abcdef\nsecond-line\n"]


def test_paused_heartbeats_make_the_node_unknown_until_resumed(kubectl: Kubectl) -> None:
    def ready() -> tuple[str, list[str]]:
        node = kubectl.json("get", "node", NODE_NAME)
        status = next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")
        return status, [t["key"] for t in node["spec"].get("taints") or []]

    def wait_for(check: Callable[[tuple[str, list[str]]], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not check(ready()):
            assert time.monotonic() < deadline, ready()
            time.sleep(0.5)

    testing.pause_heartbeats()
    try:
        wait_for(lambda r: r[0] == "Unknown" and "node.kubernetes.io/unreachable" in r[1], 40)
    finally:
        testing.resume_heartbeats()
    wait_for(lambda r: r[0] == "True" and "node.kubernetes.io/unreachable" not in r[1], 30)


def test_the_operator_image_runs_as_its_dockerfile_user_under_run_as_non_root(
    kubectl: Kubectl, namespace: str
) -> None:
    image = {"image": "ghcr.io/agentjobs/agentjobs:latest"}
    containers = [
        {"name": "main", **image, "args": ["--help"]},
        {"name": "ids", **image, "command": ["sh", "-c", "id -u; id -g"]},
    ]
    manifest = _pod("nonroot", "", securityContext={"runAsNonRoot": True})
    manifest["spec"]["containers"] = containers
    kubectl.apply(manifest, namespace)
    pod = _wait(kubectl, namespace, "nonroot", _phase("Succeeded", "Failed"))
    assert pod["status"]["phase"] == "Succeeded", pod["status"]
    assert kubectl.run("logs", "nonroot", "-c", "main", "-n", namespace).stdout.startswith("usage")
    assert kubectl.run("logs", "nonroot", "-c", "ids", "-n", namespace).stdout == "65532\n65532\n"


def test_restart_brings_a_component_back_as_a_new_process(local_cluster: DevCluster) -> None:
    pid_file = local_cluster.layout.pid_file("versitygw")
    before = processes.alive(pid_file)
    testing.restart("s3")
    after = processes.alive(pid_file)
    assert after is not None and after != before
    assert components.S3.healthy(local_cluster.layout)


def test_deleting_a_pod_in_init_stops_its_sidecar_at_once_despite_a_long_grace(
    kubectl: Kubectl, namespace: str
) -> None:
    # Each container is stopped as soon as it exits, not at the end of the grace period:
    # a phase pod (grace 3600 s for the harvester) deleted during init must go in seconds.
    sidecar = {
        "name": "side",
        "image": "busybox",
        "restartPolicy": "Always",
        "command": [
            "sh",
            "-c",
            "trap 'echo got-term; exit 0' TERM; while true; do sleep 0.1; done",
        ],
    }
    waiting = {"name": "wait", "image": "busybox", "command": ["sh", "-c", "sleep 600"]}
    manifest = _pod("in-init", "true", initContainers=[sidecar, waiting])
    manifest["spec"]["terminationGracePeriodSeconds"] = 3600
    kubectl.apply(manifest, namespace)
    _wait(
        kubectl,
        namespace,
        "in-init",
        lambda p: "running" in _main_status(p, "wait").get("state", {}),
    )
    started = time.monotonic()
    kubectl.run("delete", "pod", "in-init", "-n", namespace, "--timeout=30s")
    assert time.monotonic() - started < 20
