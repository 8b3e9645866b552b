"""The console installed as in the cluster (R72): its own ServiceAccount with the chart's
console role, each request carrying the user's token, every read asked for that user.

A tenant's ServiceAccount holds `edit` in namespace A only; namespace B holds an Execution
of its own, with a Phase whose artifact is stored. Cases: an anonymous request gets 401 on
every page, download and action; the tenant sees A's Execution and never B's, in the list
of all namespaces too; a label filter that does not parse is 400 with the API server's
words; B's list, pages, conversation, downloads and cancel are 403; A's
artifact downloads byte for byte and A's cancel is patched as the tenant (never without the
console's own header); a status whose URL points into B's storage is not served from A; a bad
token at sign-in is 401, a sign-in posted from another site's page 403, a good one signs in
with a cookie scripts cannot read, and signing out clears it.
"""

from __future__ import annotations

import io
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from minio import Minio

from devcluster.build import KUBERNETES_VERSION
from devcluster.manifests import CHART, RELEASE
from devcluster.operator_account import token_kubeconfig
from devcluster.testing import Kubectl
from tests.integration.console_fixtures import console
from tests.integration.stored import BUCKET

ARTIFACT = b"# Report\n\x00\x01 binary tail \xff"
PHASE = "write"


def helm_show(env: dict[str, str], namespace: str, template: str) -> list[dict[str, Any]]:
    rendered = subprocess.run(
        ["helm", "template", RELEASE, str(CHART), "--namespace", namespace,
         "--kube-version", KUBERNETES_VERSION,
         "--set", "console.enabled=true", "--show-only", f"templates/{template}"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [doc for doc in yaml.safe_load_all(rendered) if doc]


def stored_execution(
    kubectl: Kubectl, s3: Minio, bucket: str, namespace: str, name: str, *, url_namespace: str
) -> str:
    """An Execution and a Phase it owns whose status lists one stored artifact (under
    ``url_namespace``'s root) and one attempt's transcript; no operator runs it."""
    kubectl.apply(
        {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Execution",
            "metadata": {"name": name},
            "spec": {"phases": [{"name": PHASE, "image": "busybox", "prompt": "Write."}]},
        },
        namespace,
    )
    uid = kubectl.json("get", "execution", name, "-n", namespace)["metadata"]["uid"]
    phase = f"{name}-0-{PHASE}"
    kubectl.apply(
        {
            "apiVersion": "agentjobs.io/v1alpha1",
            "kind": "Phase",
            "metadata": {
                "name": phase,
                "labels": {"agentjobs.io/execution": name},
                "ownerReferences": [{
                    "apiVersion": "agentjobs.io/v1alpha1", "kind": "Execution", "name": name,
                    "uid": uid, "controller": True,
                }],
            },
            "spec": {
                "executionName": name, "index": 0, "name": PHASE, "image": "busybox",
                "prompt": "Write.",
            },
        },
        namespace,
    )  # fmt: skip
    root = f"namespaces/{url_namespace}/executions/{name}/0-{PHASE}/attempt-1"
    s3.put_object(bucket, f"{root}/output/report.md", io.BytesIO(ARTIFACT), len(ARTIFACT))
    transcript = b'working\nTASK_RESULT: {"success": true}\nTASK_RESULT_END\n'
    s3.put_object(bucket, f"{root}/transcript.log", io.BytesIO(transcript), len(transcript))
    status = {
        "status": {
            "status": "completed",
            "attempts": [{
                "number": 1, "status": "completed", "podName": f"{phase}-a1",
                "finishedAt": "2026-12-05T00:00:00Z",
                "transcript": {
                    "url": f"s3://{bucket}/{root}/transcript.log", "sha256": "0" * 64,
                    "size": len(transcript),
                },
            }],
            "artifacts": [{
                "path": "report.md", "title": "Report", "size": len(ARTIFACT),
                "url": f"s3://{bucket}/{root}/output/report.md",
            }],
        }
    }  # fmt: skip
    kubectl.run(
        "patch", "phase", phase, "-n", namespace, "--subresource=status", "--type=merge",
        "-p", yaml.safe_dump(status),
    )  # fmt: skip
    return name


class Browserless:
    """Requests as a user with a token (or none), never following redirects."""

    def __init__(self, base: str, token: str | None) -> None:
        self._base = base
        self._token = token

    def send(
        self, method: str, path: str, data: bytes | None = None, **headers: str
    ) -> tuple[int, bytes, Any]:
        request = urllib.request.Request(
            self._base + path, data=data, method=method, headers=headers
        )
        if self._token:
            request.add_header("Authorization", f"Bearer {self._token}")
        opener = urllib.request.build_opener(NoRedirects)
        try:
            with opener.open(request, timeout=30) as answer:
                return answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as error:
            return error.code, error.read(), error.headers


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


@pytest.fixture
def deployed(
    local_cluster: Any,
    kubectl: Kubectl,
    crds: None,
    namespace: str,
    other_namespace: str,
    tenant: Kubectl,
    s3: Minio,
    s3_env: dict[str, str],
    tmp_path: Path,
) -> Iterator[tuple[str, str, str]]:
    """The console as the chart installs it: its base URL, the tenant's token and the
    console's ServiceAccount token."""
    for obj in helm_show(s3_env, namespace, "console-serviceaccount.yaml"):
        kubectl.apply(obj, namespace)
    for template in ("console-clusterrole.yaml", "console-clusterrolebinding.yaml"):
        for obj in helm_show(s3_env, namespace, template):
            obj["metadata"]["name"] = f"{namespace}-console"  # one per test, cluster-wide
            if obj["kind"] == "ClusterRoleBinding":
                obj["roleRef"]["name"] = f"{namespace}-console"
            kubectl.run("apply", "-f", "-", input=yaml.safe_dump(obj))
    account = f"{RELEASE}-console"
    config = token_kubeconfig(kubectl.env, namespace, account, tmp_path / "console.kubeconfig")
    tenant_token = kubectl.run(
        "create", "token", "tenant", "-n", namespace, "--duration=1h"
    ).stdout.strip()
    bucket = s3_env.get("AGENTJOBS_S3_BUCKET", BUCKET)
    if not s3.bucket_exists(bucket):
        s3.make_bucket(bucket)
    stored_execution(kubectl, s3, bucket, namespace, "mine", url_namespace=namespace)
    stored_execution(kubectl, s3, bucket, other_namespace, "theirs", url_namespace=other_namespace)
    stored_execution(kubectl, s3, bucket, namespace, "forged", url_namespace=other_namespace)
    env = {**s3_env, "KUBECONFIG": str(config)}
    with console(env, tmp_path / "console.log", "--user-tokens") as url:
        yield url, tenant_token, config.read_text()
    kubectl.run("delete", "clusterrole,clusterrolebinding", f"{namespace}-console", check=False)


def pages_of(namespace: str, name: str) -> list[tuple[str, str]]:
    base = f"/executions/{namespace}/{name}"
    return [
        ("GET", f"/executions?namespace={namespace}"),
        ("GET", base),
        ("GET", f"{base}/phases/{PHASE}/attempts/1"),
        ("GET", f"{base}/phases/{PHASE}/artifact?path=report.md"),
        ("POST", f"{base}/cancel"),
    ]


def test_an_anonymous_request_is_401_everywhere(
    deployed: tuple[str, str, str], namespace: str
) -> None:
    url, _, _ = deployed
    anonymous = Browserless(url, None)
    for method, path in [("GET", "/executions"), *pages_of(namespace, "mine")]:
        status, body, _ = anonymous.send(
            method, path, b"" if method == "POST" else None, **{"X-Agentjobs-Action": "1"}
        )
        assert status == 401, (path, body[:300])
    assert anonymous.send("GET", "/executions", Authorization="Bearer not-a-token")[0] == 401


def test_a_tenant_sees_its_namespace_and_never_anothers(
    deployed: tuple[str, str, str], namespace: str, other_namespace: str, kubectl: Kubectl
) -> None:
    url, token, _ = deployed
    user = Browserless(url, token)
    for path in ("/executions", f"/executions?namespace={namespace}"):
        status, body, _ = user.send("GET", path)
        assert status == 200, body[:500]
        assert b"mine" in body and b"theirs" not in body
    status, body, _ = user.send("GET", f"/executions?namespace={namespace}&label=team%20in%20(")
    assert status == 400 and b"the Kubernetes API answered" in body, body[:300]
    for method, path in pages_of(other_namespace, "theirs"):
        status, body, _ = user.send(
            method, path, b"" if method == "POST" else None, **{"X-Agentjobs-Action": "1"}
        )
        assert status == 403, (path, body[:300])
    assert (
        kubectl.json("get", "execution", "theirs", "-n", other_namespace)["spec"].get("cancel")
        is not True
    )


def test_a_tenant_downloads_its_artifact_and_cancels_its_execution_as_itself(
    deployed: tuple[str, str, str], namespace: str, kubectl: Kubectl
) -> None:
    url, token, _ = deployed
    user = Browserless(url, token)
    status, body, headers = user.send(
        "GET", f"/executions/{namespace}/mine/phases/{PHASE}/artifact?path=report.md"
    )
    assert (status, body) == (200, ARTIFACT)
    assert headers["Content-Disposition"].startswith("attachment")
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    status, body, _ = user.send("GET", f"/executions/{namespace}/mine/phases/{PHASE}/attempts/1")
    assert status == 200 and b"TASK_RESULT report: <strong>success</strong>" in body
    assert user.send("POST", f"/executions/{namespace}/mine/cancel", b"")[0] == 403  # no header
    status, _, _ = user.send(
        "POST", f"/executions/{namespace}/mine/cancel", b"", **{"X-Agentjobs-Action": "1"}
    )
    assert status == 204
    assert kubectl.json("get", "execution", "mine", "-n", namespace)["spec"]["cancel"] is True
    console_account = f"system:serviceaccount:{namespace}:{RELEASE}-console"
    may = kubectl.run(
        "auth",
        "can-i",
        "patch",
        "executions",
        "-n",
        namespace,
        f"--as={console_account}",
        check=False,
    )
    assert may.stdout.strip() == "no"  # so the patch went as the tenant


def test_a_status_url_into_another_namespaces_storage_is_not_served(
    deployed: tuple[str, str, str], namespace: str
) -> None:
    url, token, _ = deployed
    user = Browserless(url, token)
    base = f"/executions/{namespace}/forged/phases/{PHASE}"
    for path in (f"{base}/artifact?path=report.md", f"{base}/attempts/1"):
        status, body, _ = user.send("GET", path)
        assert status == 404 and b"is not stored under execution" in body, body[:300]


def test_sign_in_checks_the_token_and_keeps_it_from_scripts(deployed: tuple[str, str, str]) -> None:
    url, token, _ = deployed
    anonymous = Browserless(url, None)
    bad = urllib.parse.urlencode({"token": "nope"}).encode()
    assert anonymous.send("POST", "/login", bad)[0] == 401
    good = urllib.parse.urlencode({"token": token}).encode()
    assert anonymous.send("POST", "/login", good, Origin="http://elsewhere.example")[0] == 403
    status, _, headers = anonymous.send("POST", "/login", good)
    cookie = headers["Set-Cookie"]
    assert status == 302 and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    value = cookie.split(";")[0]
    assert anonymous.send("GET", "/executions", Cookie=value)[0] == 200
    status, _, headers = anonymous.send("POST", "/logout", b"", Cookie=value)
    assert status == 302 and "Max-Age=0" in headers["Set-Cookie"]
