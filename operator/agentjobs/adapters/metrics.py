"""The operator's Prometheus metrics, served on ``agentjobs run --metrics-port``.

One registry of the operator's own (the process collectors too), named as
Prometheus asks: the ``agentjobs_`` prefix, base units, ``_total`` for
counters, ``_seconds`` and ``_bytes``. Labels carry only bounded values (a
status, a classification, a report state, an HTTP status code, a namespace,
a model only when the price table lists it), never an object's name, so a
thousand Executions make no thousand series. Recording is cheap
and never fails a run: the functions here are called from the handlers at
the moment each fact becomes known.
"""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

# From a second to a day: agents run for minutes to hours.
DURATION_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400)
# From the agent's exit to the phase's verdict: the harvester's last sync and the checkpoint.
FINISHING_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)

executions_finished = Counter(
    "agentjobs_executions_finished_total",
    "Executions that ended, by status and failure classification ('' for none).",
    ["status", "failure_classification"],
    registry=REGISTRY,
)
phases_finished = Counter(
    "agentjobs_phases_finished_total",
    "Phases that ended, by status and failure classification ('' for none).",
    ["status", "failure_classification"],
    registry=REGISTRY,
)
reports = Counter(
    "agentjobs_reports_total",
    "Ended agent attempts by the state of their TASK_RESULT report.",
    ["state"],
    registry=REGISTRY,
)
attempts_retried = Counter(
    "agentjobs_attempts_retried_total",
    "Agent attempts followed by another under the phase's retry policy (R45).",
    registry=REGISTRY,
)
evaluations = Counter(
    "agentjobs_outcome_evaluations_total",
    "Outcome evaluations that ended, by result (R40).",
    ["result"],
    registry=REGISTRY,
)
phase_duration = Histogram(
    "agentjobs_phase_duration_seconds",
    "From a phase's start to its end, by status.",
    ["status"],
    buckets=DURATION_BUCKETS,
    registry=REGISTRY,
)
agent_end_to_finished = Histogram(
    "agentjobs_agent_end_to_finished_seconds",
    "From the agent container's exit to the phase's final status.",
    buckets=FINISHING_BUCKETS,
    registry=REGISTRY,
)
active_runners = Gauge(
    "agentjobs_active_runners", "Phase runners running in this replica.", registry=REGISTRY
)
log_streams = Gauge(
    "agentjobs_log_streams", "Container logs being followed live.", registry=REGISTRY
)
log_bytes_read = Counter(
    "agentjobs_log_bytes_read_total", "Bytes read from container logs.", registry=REGISTRY
)
harvest_bytes = Counter(
    "agentjobs_harvest_bytes_total",
    "Bytes of phase output the harvesters stored, as their final manifests list them.",
    registry=REGISTRY,
)
harvest_lag = Histogram(
    "agentjobs_harvest_lag_seconds",
    "From the agent's exit until its pod had stopped: the harvester's last sync.",
    buckets=FINISHING_BUCKETS,
    registry=REGISTRY,
)
storage_errors = Counter(
    "agentjobs_storage_errors_total",
    "Failed requests to the object store (each retried).",
    registry=REGISTRY,
)
webhook_deliveries = Counter(
    "agentjobs_webhook_deliveries_total",
    "Completion webhook attempts by outcome: delivered, retry (will be tried again), failed.",
    ["outcome"],
    registry=REGISTRY,
)
api_errors = Counter(
    "agentjobs_api_errors_total",
    "Kubernetes API requests answered with an error, by HTTP status code.",
    ["code"],
    registry=REGISTRY,
)
tokens = Counter(
    "agentjobs_tokens_total",
    "Tokens agents and graders used (input, cache writes and output; R67), by namespace and"
    " model ('other' for a model the price table does not list).",
    ["namespace", "model"],
    registry=REGISTRY,
)
cost_usd = Counter(
    "agentjobs_cost_usd_total",
    "Dollars agents and graders cost, where known (R68), by namespace and model.",
    ["namespace", "model"],
    registry=REGISTRY,
)
limit_stops = Counter(
    "agentjobs_limit_stops_total",
    "Agents stopped by a limit (R70, R71), by the limit's field.",
    ["limit"],
    registry=REGISTRY,
)
OTHER_MODEL = "other"


def spent(
    namespace: str,
    model: str | None,
    priced: Collection[str],
    *,
    tokens_used: int | None,
    cost: Decimal | None,
) -> None:
    """A run's tokens and cost, under its model only if ``priced`` lists it: a transcript
    names whatever model it likes, and each name would be a series."""
    label = model if model is not None and model in priced else OTHER_MODEL
    if tokens_used:
        tokens.labels(namespace, label).inc(tokens_used)
    if cost:
        cost_usd.labels(namespace, label).inc(float(cost))


reconcile_errors = Counter(
    "agentjobs_reconcile_errors_total",
    "Execution reconciles that raised and will be tried again.",
    registry=REGISTRY,
)


def serve(port: int, address: str = "0.0.0.0") -> None:
    """Serve ``/metrics`` on ``port`` from a thread of its own."""
    start_http_server(port, addr=address, registry=REGISTRY)


# R75: per ExecutionQueue (the namespace's own objects bound the labels).
queue_waiting = Gauge(
    "agentjobs_queue_waiting",
    "Executions waiting in each queue for their turn, as its last decision counted them.",
    ["namespace", "queue"],
    registry=REGISTRY,
)
queue_wait = Histogram(
    "agentjobs_queue_wait_seconds",
    "From an Execution's creation to its admission by its queue.",
    ["namespace", "queue"],
    buckets=DURATION_BUCKETS,
    registry=REGISTRY,
)
