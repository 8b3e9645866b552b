"""One operator, two tenants: what the built-in `edit` role in namespace A can reach.

A ServiceAccount bound to `edit` in A (which the chart's aggregated role lets run
Executions) runs Executions there, under the operator that also serves namespace B.
With everything it can read in A (its Secrets, ConfigMaps, pods and their env, the
per-attempt token and the CA, and presigned URLs it asks the credentials endpoint for
with that token) it cannot read, write or delete any object of B, nor touch a bucket
outside the allow-list. Cases, in one run against each S3 store:

- nothing in A holds the operator's S3 keys (plain or base64);
- the token gets URLs for its own attempt only: B's keys, a `..` escape, another
  attempt's prefix and another bucket are refused; a token re-signed for B is refused;
- a URL it obtained works only for its one object and method: not moved to B's key,
  nor used to GET or DELETE;
- once the phase has ended its token gets nothing, and neither the token nor a URL's
  signature is in the operator's or the sidecars' logs, an event or a CR;
- an Execution naming a bucket off the allow-list is blocked with a message naming the
  bucket and the flag, stores nothing there, and `artifactRetention: Delete` deletes
  nothing there;
- B's objects are byte for byte what they were, and the tenant reads nothing of B's
  through the API.
"""

from __future__ import annotations

import base64
import io
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import pytest
import urllib3
from minio import Minio

from devcluster.testing import Kubectl
from tests import builders
from tests.cluster_fixtures import every_s3_store
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    running,
    wait_finished,
    wait_for,
)
from tests.integration.stored import BUCKET, stored_objects

OTHER_BUCKET = "agentjobs-not-allowed"
REPORT = builders.echo_block(builders.report())

pytestmark = every_s3_store


def execution(name: str, script: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "defaults": {"keepPods": True},  # the tests read the pods after the end
            **spec,
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Work.",
                    "command": ["sh", "-c"],
                    "args": [f'set -e; cd "$AGENTJOBS_OUTPUT_DIR"; {script}; {REPORT}'],
                }
            ],
        },
    }


@pytest.fixture
def operator_of_both(
    s3_env: dict[str, str], namespace: str, other_namespace: str, tmp_path: Path
) -> Iterator[OperatorProcess]:
    process = OperatorProcess(
        s3_env,
        namespace,
        tmp_path / "operator.log",
        ["--namespace", other_namespace],
    )
    yield from running(process)


class Endpoint:
    """The credentials endpoint, called as anyone holding a token and the CA may call it."""

    def __init__(self, url: str, ca: str) -> None:
        self.url = url.rstrip("/") + "/v1/presign"
        self.http = urllib3.PoolManager(ssl_context=ssl.create_default_context(cadata=ca))

    def presign(self, token: str, method: str, bucket: str, key: str) -> tuple[int, Any]:
        response = self.http.request(
            "POST",
            self.url,
            body=json.dumps({"objects": [{"method": method, "bucket": bucket, "key": key}]}),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        return response.status, json.loads(response.data)


def resign_for(token: str, namespace: str) -> str:
    """The token with its claims changed to another namespace, its signature kept."""
    version, payload, mac = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    own = claims["ns"]
    claims["ns"] = namespace
    claims["w"] = [BUCKET, claims["w"][1].replace(own, namespace, 1)]
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"{version}.{forged}.{mac}"


def readable_in(tenant: Kubectl) -> str:
    """Everything the tenant can read in its namespace that could carry a credential."""
    return json.dumps([tenant.json("get", kind) for kind in ("secrets", "configmaps", "pods")])


def test_a_tenant_with_edit_in_a_reaches_nothing_of_b_and_no_other_bucket(
    kubectl: Kubectl,
    namespace: str,
    other_namespace: str,
    tenant: Kubectl,
    operator_of_both: OperatorProcess,
    s3: Minio,
    s3_env: dict[str, str],
) -> None:
    a, b = namespace, other_namespace
    kubectl.apply(execution("victim", "echo B-ONLY > b-secret.txt"), b)
    assert wait_finished(kubectl, b, "victim", timeout=90)["status"] == "completed"
    b_objects = stored_objects(s3, bucket=BUCKET, prefix=f"namespaces/{b}/")
    b_key = f"namespaces/{b}/executions/victim/0-work/attempt-1/output/b-secret.txt"
    assert b_objects[b_key] == b"B-ONLY\n"
    if not s3.bucket_exists(OTHER_BUCKET):
        s3.make_bucket(OTHER_BUCKET)
    kept = f"namespaces/{a}/executions/grab/keep.txt"
    s3.put_object(OTHER_BUCKET, kept, io.BytesIO(b"keep"), 4)

    tenant.apply(execution("long", "echo mine > a.txt; sleep 20"), a)
    wait_for(
        lambda: any(
            "token" in (s.get("data") or {}) for s in tenant.json("get", "secrets")["items"]
        ),
        timeout=30,
        what="the attempt's Secret",
    )
    wait_for(lambda: tenant.json("get", "pod", "long-0-work-a1"), timeout=30, what="the pod")

    # Nothing the tenant can read holds the operator's S3 keys.
    everything = readable_in(tenant)
    for name in ("AGENTJOBS_S3_ACCESS_KEY", "AGENTJOBS_S3_SECRET_KEY"):
        key = s3_env[name]
        assert key not in everything and base64.b64encode(key.encode()).decode() not in everything

    (secret,) = [s for s in tenant.json("get", "secrets")["items"] if "token" in s.get("data", {})]
    token = base64.b64decode(secret["data"]["token"]).decode()
    ca = base64.b64decode(secret["data"]["ca.crt"]).decode()
    pod = tenant.json("get", "pod", "long-0-work-a1")
    (url,) = {
        item["value"]
        for container in pod["spec"]["initContainers"]
        for item in container["env"]
        if item["name"] == "AGENTJOBS_CREDENTIALS_URL"
    }
    endpoint = Endpoint(url, ca)
    root = f"namespaces/{a}/executions/long/0-work/attempt-1"

    status, answer = endpoint.presign(token, "PUT", BUCKET, f"{root}/output/extra.txt")
    assert status == 200, answer
    (own_url,) = answer["urls"]
    refused = [
        ("GET", BUCKET, b_key),
        ("PUT", BUCKET, b_key),
        ("PUT", BUCKET, f"{root}/../../../../{b_key}"),
        ("GET", BUCKET, f"{root}/output/../../../../{b_key}"),
        ("PUT", BUCKET, f"namespaces/{a}/executions/long/0-work/attempt-2/output/x"),
        ("PUT", BUCKET, f"namespaces/{a}/executions/victim/0-work/attempt-1/output/x"),
        ("PUT", OTHER_BUCKET, f"{root}/output/x"),
        ("GET", OTHER_BUCKET, kept),
    ]
    for method, bucket, key in refused:
        status, answer = endpoint.presign(token, method, bucket, key)
        assert status == 403, (method, bucket, key, answer)
        assert token not in json.dumps(answer)
    status, _ = endpoint.presign(resign_for(token, b), "GET", BUCKET, b_key)
    assert status == 401

    # A presigned URL is good for its one object and method only.
    store = urllib3.PoolManager()
    assert store.request("PUT", own_url, body=b"mine").status == 200
    parts = urlsplit(own_url)
    moved = urlunsplit(parts._replace(path=f"/{BUCKET}/{b_key}"))
    assert store.request("PUT", moved, body=b"overwritten").status == 403
    assert store.request("GET", own_url).status == 403
    assert store.request("DELETE", own_url).status == 403
    assert store.request("DELETE", moved).status == 403

    assert wait_finished(tenant, a, "long", timeout=90)["status"] == "completed"
    # Neither the token nor a URL's signature shows in a log, an event or a resource.
    signature = parse_qs(parts.query)["X-Amz-Signature"][0]
    sidecar_logs = [
        tenant.run("logs", "long-0-work-a1", "-c", container).stdout
        for container in ("harvester", "fetch-inputs")
    ]
    seen = [operator_of_both.log(), *sidecar_logs, json.dumps(tenant.json("get", "events"))]
    seen.append(json.dumps(tenant.json("get", "executions,phases")))
    for text in seen:
        assert token not in text and signature not in text
    status, answer = endpoint.presign(token, "PUT", BUCKET, f"{root}/output/late.txt")
    assert status == 403 and "ended" in answer["error"]

    # A bucket off the allow-list: blocked before anything runs; Delete deletes nothing there.
    grab = execution("grab", "echo stolen > x.txt", artifactRetention="Delete")
    grab["spec"]["artifacts"] = {"bucket": OTHER_BUCKET}
    tenant.apply(grab, a)
    wait_finished(tenant, a, "grab", timeout=60)
    blocked = phase_status(tenant, a, "grab-0-work")
    outcome = blocked["taskOutcome"]
    assert (blocked["status"], outcome["status"], outcome["source"]) == (
        "failed",
        "blocked",
        "system",
    ), blocked
    assert "podName" not in blocked  # nothing ran
    (blocker,) = outcome["blockers"]
    assert OTHER_BUCKET in blocker["message"] and "--allowed-bucket" in blocker["message"]
    tenant.run("delete", "execution", "grab", "--timeout=30s")
    assert stored_objects(s3, bucket=OTHER_BUCKET, prefix=f"namespaces/{a}/") == {kept: b"keep"}

    # A prefix cannot put A's objects under B's root (where B's Delete would remove them).
    nested = execution("nested", "echo x > x.txt")
    nested["spec"]["artifacts"] = {"prefix": f"{b_key.rsplit('/', 1)[0]}"}
    refused_prefix = tenant.run("apply", "-n", a, "-f", "-", input=json.dumps(nested), check=False)
    assert refused_prefix.returncode != 0
    assert "'namespaces' segments" in refused_prefix.stderr

    # B is untouched, and the tenant reads nothing of B through the API either.
    assert stored_objects(s3, bucket=BUCKET, prefix=f"namespaces/{b}/") == b_objects
    for kind in ("secrets", "configmaps", "pods", "executions"):
        result = tenant.run("get", kind, "-n", b, check=False)
        assert result.returncode != 0 and "forbidden" in result.stderr.lower(), kind
