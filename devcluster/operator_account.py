"""The operator's identity on the local cluster, as the chart gives it: its ServiceAccount,
Roles and RoleBindings for one namespace, and a kubeconfig with a token of that account.

The demo, the benchmarks and the RBAC tests run the operator this way rather than as the
cluster's admin: with the least privilege the chart grants, authenticated by a token, and
ranked by the API server's priority and fairness as a workload's ServiceAccount.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from devcluster.build import KUBERNETES_VERSION
from devcluster.manifests import CHART, RELEASE

LEASE = RELEASE  # the chart names the replicas' Lease after the release


def render_rbac(
    env: dict[str, str], namespace: str, replicas: int = 1, *, webhooks: bool = False
) -> list[dict[str, Any]]:
    """The chart's ServiceAccount, Role and RoleBinding for an operator of one namespace,
    and with more than one replica the Role and RoleBinding of its Lease."""
    templates = ["serviceaccount.yaml", "role.yaml", "rolebinding.yaml"]
    if replicas > 1:
        templates += ["leader-election-role.yaml", "leader-election-rolebinding.yaml"]
    result = subprocess.run(
        [
            "helm", "template", RELEASE, str(CHART),
            "--kube-version", KUBERNETES_VERSION,
            "--namespace", namespace,
            "--set", f"watchNamespaces={{{namespace}}}",
            "--set", f"replicaCount={replicas}",
            "--set", f"webhooks.enabled={str(webhooks).lower()}",
            *(arg for name in templates for arg in ("--show-only", f"templates/{name}")),
        ],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def account_name(objects: list[dict[str, Any]]) -> str:
    """The name of the one ServiceAccount among rendered objects."""
    (name,) = [o["metadata"]["name"] for o in objects if o["kind"] == "ServiceAccount"]
    return str(name)


def token_kubeconfig(
    env: dict[str, str], namespace: str, account: str, path: Path, *, duration: str = "1h"
) -> Path:
    """A kubeconfig at `path` that authenticates as the ServiceAccount with a token of
    `duration`, for the cluster of `env`'s (admin) kubeconfig."""
    token = subprocess.run(
        ["kubectl", "create", "token", account, "-n", namespace, f"--duration={duration}"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    cluster = yaml.safe_load(Path(env["KUBECONFIG"]).read_text())["clusters"][0]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [
            {
                "name": account,
                "context": {"cluster": cluster["name"], "user": account, "namespace": namespace},
            }
        ],
        "current-context": account,
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def install_rbac(
    env: dict[str, str], namespace: str, replicas: int = 1, *, timeout: float = 60.0
) -> str:
    """Apply :func:`render_rbac`'s objects and wait until the API server's authorizer
    grants them (its informers pick Roles up in a moment); the ServiceAccount's name."""
    objects = render_rbac(env, namespace, replicas)
    subprocess.run(
        ["kubectl", "apply", "-f", "-"],
        input=yaml.safe_dump_all(objects), env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    account = account_name(objects)
    deadline = time.monotonic() + timeout
    while not _granted(env, namespace, account):
        if time.monotonic() > deadline:
            raise TimeoutError(f"the chart's Role for {namespace} not granted in {timeout:.0f} s")
        time.sleep(0.2)
    return account


def _granted(env: dict[str, str], namespace: str, account: str) -> bool:
    answer = subprocess.run(
        ["kubectl", "auth", "can-i", "watch", "phases.agentjobs.io", "-n", namespace,
         f"--as=system:serviceaccount:{namespace}:{account}"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return answer.stdout.strip() == "yes"


def operator_kubeconfig(
    env: dict[str, str], namespace: str, directory: Path, *, replicas: int = 1
) -> Path:
    """The chart's RBAC for `namespace` installed (:func:`install_rbac`), and a kubeconfig
    in `directory` with a token of its ServiceAccount, for an operator run outside."""
    account = install_rbac(env, namespace, replicas)
    return token_kubeconfig(env, namespace, account, directory / f"{namespace}.kubeconfig")
