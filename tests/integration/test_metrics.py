"""Every metric of `agentjobs run --metrics-port` moves in a full run on the local cluster.

One operator with storage and webhooks runs, at once: a phase that fails once
and is retried, a graded phase, a phase refused by admission (an unknown
PriorityClass: an API error), a phase stopped by its maxTokens (OpenCode-shaped,
its tokens and cost counted), and an Execution with `artifactRetention:
Delete` deleted while the S3 store is down (a storage error and a reconcile
error, until the store is back). /metrics is scraped while they run and
after, with prometheus_client's own parser.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agentjobs.adapters import metrics
from devcluster import testing
from devcluster.testing import Kubectl
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    free_port,
    wait_finished,
    wait_for,
)
from tests.integration.test_webhooks import SECRET, SECRET_NAME, Receiver, receivers, target

__all__ = ["receivers"]  # the fixture, used by name

WROTE = (
    'echo "# Notes" > "$AGENTJOBS_OUTPUT_DIR/notes.md"; '
    'echo \'TASK_RESULT: {"success": true, "side_effects": "none"}\'; echo TASK_RESULT_END'
)
GRADER = (
    'echo \'GRADE_RESULT: {"result": "satisfied", "explanation": "Fine.",'
    ' "criteria": [{"name": "notes", "met": true}]}\'; echo GRADE_RESULT_END'
)
# An OpenCode-shaped agent whose first step passes its maxTokens: stopped (R70).
SPENDING = (
    'echo work > "$AGENTJOBS_OUTPUT_DIR/notes.md"; '
    'echo \'{"type":"step_start","sessionID":"s","part":{}}\'; '
    'echo \'{"type":"step_finish","sessionID":"s","part":{"reason":'
    '"tool-calls","cost":0.5,"tokens":{"input":100,"output":10}}}\'; '
    "sleep 60"
)
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def execution(name: str, phase: dict[str, Any], **spec: Any) -> dict[str, Any]:
    base = {"name": "work", "image": BUSYBOX, "prompt": "Work.", "command": ["sh", "-c"]}
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {**spec, "phases": [{**base, **phase}]},
    }


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: Samples, name: str, **labels: str) -> float:
    return sum(
        value
        for (found, pairs), value in samples.items()
        if found == name and labels.items() <= dict(pairs).items()
    )


@pytest.fixture
def metered(
    s3_env: dict[str, str],
    crds: None,
    kubectl: Kubectl,
    namespace: str,
    tmp_path: Path,
    receivers: tuple[Receiver, Receiver],
) -> Iterator[tuple[OperatorProcess, int]]:
    kubectl.run(
        "create", "secret", "generic", SECRET_NAME, "-n", namespace,
        f"--from-literal=signing={SECRET}",
    )  # fmt: skip
    port = free_port()
    process = OperatorProcess(
        s3_env,
        namespace,
        tmp_path / "operator.log",
        [
            f"--metrics-port={port}",
            f"--webhook-allow=http://127.0.0.1:{receivers[0].port}/*",
            f"--webhook-secret-name={SECRET_NAME}",
            "--webhook-backoff-seconds=1",
        ],
    )
    process.start()
    yield process, port
    process.stop()
    print(process.log()[-20000:])


# Alone on the cluster (make test's second lane): it stops the S3 store other workers' tests
# use meanwhile.
@pytest.mark.exclusive
def test_every_metric_moves_in_a_full_run(
    kubectl: Kubectl,
    namespace: str,
    metered: tuple[OperatorProcess, int],
    receivers: tuple[Receiver, Receiver],
    s3_store: str,
) -> None:
    _, port = metered
    allowed, _ = receivers
    allowed.answers["/flaky"] = [500, 204]

    def serving() -> bool:
        try:
            return bool(scrape(port))
        except OSError:  # not listening yet
            return False

    wait_for(serving, timeout=30, what="the metrics endpoint")
    peaks: dict[str, float] = {}
    sampling = True

    def sample_gauges() -> None:
        while sampling:
            try:
                now = scrape(port)
            except OSError:
                continue
            for name in (
                "agentjobs_active_runners",
                "agentjobs_log_streams",
                "agentjobs_queue_waiting",
            ):
                peaks[name] = max(peaks.get(name, 0.0), total(now, name))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample_gauges, daemon=True)
    sampler.start()
    retried = 'if [ "$AGENTJOBS_ATTEMPT" = 1 ]; then sleep 2; exit 1; fi; ' + WROTE
    # One at a time: the graded one waits in the queue while the retried one runs (R75).
    kubectl.apply(
        {"apiVersion": "agentjobs.io/v1alpha1", "kind": "ExecutionQueue",
         "metadata": {"name": "metered"}, "spec": {"maxRunning": 1}},
        namespace,
    )  # fmt: skip
    kubectl.apply(
        execution(
            "retried",
            {"args": [retried], "retry": {"limit": 1, "backoffSeconds": 0}},
            notify=[target(allowed.url("/flaky"))],
            queue="metered",
            priority=1,
        ),
        namespace,
    )
    graded = {"args": [WROTE], "outcome": {"rubric": "Notes exist.",
              "grader": {"command": ["sh", "-c"], "args": [GRADER]}}}  # fmt: skip
    kubectl.apply(execution("graded", graded, queue="metered"), namespace)
    kubectl.apply(execution("refused", {"args": [WROTE], "priorityClassName": "nope"}), namespace)
    kubectl.apply(execution("deleted", {"args": [WROTE]}, artifactRetention="Delete"), namespace)
    spending = {"args": [SPENDING], "transcriptFormat": "opencode", "limits": {"maxTokens": 100}}
    kubectl.apply(execution("stopped", spending), namespace)
    for name, status in (
        ("retried", "completed"),
        ("graded", "completed"),
        ("deleted", "completed"),
        ("stopped", "failed"),
    ):
        assert wait_finished(kubectl, namespace, name, timeout=120)["status"] == status
    assert wait_finished(kubectl, namespace, "refused")["status"] == "failed"
    wait_for(lambda: total(scrape(port), "agentjobs_webhook_deliveries_total", outcome="delivered"),
             timeout=30, what="the webhook delivered")  # fmt: skip

    testing.stop_s3(s3_store)
    try:
        kubectl.run("delete", "-n", namespace, "execution", "deleted", "--wait=false")
        wait_for(lambda: total(scrape(port), "agentjobs_reconcile_errors_total") > 0,
                 timeout=30, what="a reconcile error")  # fmt: skip
    finally:
        testing.start_s3(s3_store)
    wait_for(
        lambda: kubectl.run("get", "-n", namespace, "execution", "deleted", check=False).returncode,
        timeout=60,
        what="the deletion once the store is back",
    )
    sampling = False
    sampler.join(timeout=10)

    after = scrape(port)
    counted = {
        "agentjobs_executions_finished_total": {"status": "completed"},
        "agentjobs_phases_finished_total": {
            "status": "failed",
            "failure_classification": "platform",
        },
        "agentjobs_reports_total": {"state": "success"},
        "agentjobs_attempts_retried_total": {},
        "agentjobs_outcome_evaluations_total": {"result": "satisfied"},
        "agentjobs_phase_duration_seconds_count": {"status": "completed"},
        "agentjobs_agent_end_to_finished_seconds_count": {},
        "agentjobs_harvest_lag_seconds_count": {},
        "agentjobs_log_bytes_read_total": {},
        "agentjobs_harvest_bytes_total": {},
        "agentjobs_storage_errors_total": {},
        "agentjobs_webhook_deliveries_total": {"outcome": "retry"},
        "agentjobs_api_errors_total": {"code": "403"},
        "agentjobs_reconcile_errors_total": {},
        "agentjobs_tokens_total": {"namespace": namespace, "model": "other"},
        "agentjobs_cost_usd_total": {"namespace": namespace, "model": "other"},
        "agentjobs_limit_stops_total": {"limit": "maxTokens"},
        "agentjobs_queue_wait_seconds_count": {"namespace": namespace, "queue": "metered"},
    }
    for name, labels in counted.items():
        assert total(after, name, **labels) > 0, (name, labels)
    assert total(after, "agentjobs_phases_finished_total") == 5  # the retried phase once
    assert peaks["agentjobs_active_runners"] >= 1 and peaks["agentjobs_log_streams"] >= 1
    assert peaks["agentjobs_queue_waiting"] >= 1
    assert total(after, "agentjobs_active_runners") == 0
    assert total(after, "agentjobs_log_streams") == 0
    exported = {
        family.name for family in metrics.REGISTRY.collect() if family.name.startswith("agentjobs_")
    }
    moved = {name.removesuffix("_total").removesuffix("_count") for name in counted} | set(peaks)
    assert exported <= moved, sorted(exported - moved)
    scraped = json.dumps(sorted(n for n, _ in after))
    assert "process_resident_memory_bytes" in scraped
