"""The node's settings, named and defaulted like the kubelet's configuration fields."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .quantity import parse_quantity

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(text: str) -> float:
    """Seconds in a Go duration ("4h0m0s", "500ms", "10s"); a bare number is seconds."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"invalid duration {text!r}")
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def parse_size(text: str) -> int:
    """Bytes in a quantity such as "10Mi"."""
    size = int(parse_quantity(text))
    if size <= 0:
        raise ValueError(f"invalid size {text!r}")
    return size


@dataclass(frozen=True)
class NodeConfig:
    # The kubelet's nodeLeaseDurationSeconds; the lease is renewed every quarter of it.
    node_lease_duration_seconds: int = 40
    # containerLogMaxSize, containerLogMaxFiles, containerLogMonitorInterval.
    container_log_max_size: int = 10 * 2**20
    container_log_max_files: int = 5
    container_log_monitor_interval: float = 10.0
    # streamingConnectionIdleTimeout: an idle log stream ends after this long.
    streaming_connection_idle_timeout: float = 4 * 3600.0
    # The first crash-loop back-off (the kubelet's is 10 s).
    restart_backoff: float = 10.0
