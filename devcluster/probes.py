"""Small HTTP health probes against the cluster's processes, using only the standard library."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from devcluster.layout import APISERVER_URL, Layout


def http_status(
    url: str, context: ssl.SSLContext | None = None, timeout: float = 2.0
) -> int | None:
    """The HTTP status `url` answers with, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, ValueError):
        return None


def unverified_tls() -> ssl.SSLContext:
    """For components that serve a self-signed certificate they generate on start."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def admin_tls(layout: Layout) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(layout.pki / "ca.crt"))
    context.load_cert_chain(layout.pki / "admin.crt", layout.pki / "admin.key")
    return context


def api_get(layout: Layout, path: str) -> dict[str, Any] | None:
    """GET an API path as the cluster admin; None when it fails or does not exist."""
    try:
        with urllib.request.urlopen(
            APISERVER_URL + path, timeout=5, context=admin_tls(layout)
        ) as response:
            body: dict[str, Any] = json.load(response)
            return body
    except (OSError, ValueError):
        return None


def node_ready(layout: Layout, node_name: str) -> bool:
    node = api_get(layout, f"/api/v1/nodes/{node_name}")
    if node is None:
        return False
    conditions = node.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
