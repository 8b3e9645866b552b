"""Buckets a tenant names under an admin's allow-list pattern (R60), on each S3 store.

With `--allowed-bucket '<prefix>-*'`, the tenant's Execution naming `<prefix>-anything`,
a bucket nobody created, is blocked before anything runs, with a message naming the bucket,
and the operator does not create it; the same pattern's bucket that an admin did create is
used as before: the phase completes and its output is stored there.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from minio import Minio

from tests import builders
from tests.cluster_fixtures import every_s3_store
from tests.integration.images import BUSYBOX
from tests.integration.operator_fixtures import (
    OperatorProcess,
    phase_status,
    wait_finished,
)
from tests.integration.stored import stored_objects
from tests.security.conftest import Tenant

pytestmark = [pytest.mark.integration, every_s3_store]
REPORT = builders.echo_block(builders.report())


def execution(name: str, bucket: str) -> dict[str, Any]:
    return {
        "apiVersion": "agentjobs.io/v1alpha1",
        "kind": "Execution",
        "metadata": {"name": name},
        "spec": {
            "artifacts": {"bucket": bucket},
            "phases": [
                {
                    "name": "work",
                    "image": BUSYBOX,
                    "prompt": "Work.",
                    "command": ["sh", "-c"],
                    "args": [f'set -e; cd "$AGENTJOBS_OUTPUT_DIR"; echo hi > out.txt; {REPORT}'],
                }
            ],
        },
    }


@pytest.fixture
def prefix(s3: Minio) -> Iterator[str]:
    """A bucket-name prefix of this test's own; the buckets made under it are removed."""
    name = f"team-{uuid.uuid4().hex[:8]}"
    yield name
    for bucket in s3.list_buckets():
        if bucket.name.startswith(name):
            for item in s3.list_objects(bucket.name, recursive=True):
                assert item.object_name is not None
                s3.remove_object(bucket.name, item.object_name)
            s3.remove_bucket(bucket.name)


def test_a_pattern_never_makes_the_operator_create_a_bucket(
    tenant: Tenant, s3_env: dict[str, str], s3: Minio, prefix: str, tmp_path: Path
) -> None:
    missing, existing = f"{prefix}-anything", f"{prefix}-made"
    s3.make_bucket(existing)
    operator = OperatorProcess(
        s3_env,
        tenant.namespace,
        tmp_path / "operator.log",
        [f"--allowed-bucket={prefix}-*"],
    )
    operator.start()
    try:
        tenant.kubectl.apply(execution("grab", missing), tenant.namespace)
        tenant.kubectl.apply(execution("fine", existing), tenant.namespace)
        assert wait_finished(tenant.kubectl, tenant.namespace, "grab")["status"] == "failed"
        assert wait_finished(tenant.kubectl, tenant.namespace, "fine")["status"] == "completed"
    finally:
        operator.stop()
        print(operator.log()[-10000:])
    blocked = phase_status(tenant.kubectl, tenant.namespace, "grab-0-work")
    assert blocked["taskOutcome"]["status"] == "blocked", blocked
    assert "podName" not in blocked  # nothing ran
    (blocker,) = blocked["taskOutcome"]["blockers"]
    assert f"'{missing}' does not exist" in blocker["message"]
    assert not s3.bucket_exists(missing)
    stored = stored_objects(s3, bucket=existing, prefix=f"namespaces/{tenant.namespace}/")
    assert any(key.endswith("output/out.txt") for key in stored), stored
